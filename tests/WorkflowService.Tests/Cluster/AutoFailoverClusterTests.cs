using System.Diagnostics.CodeAnalysis;
using Npgsql;
using WorkflowService.Tests.Infrastructure;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// The pg_auto_failover cluster the tests and the fault runner own (<see cref="OwnedAutoFailoverCluster"/>): it starts
/// with a synchronous secondary, and when the primary's machine dies the secondary is promoted and holds every committed
/// row. Skipped with the reason where pg_auto_failover is missing, unless WORKFLOW_TESTS_REQUIRE_TOOLS names it.
/// </summary>
public sealed class AutoFailoverClusterTests
{
    /// <summary>Short monitor timeouts: the failover takes seconds, not pg_auto_failover's default of about a minute.</summary>
    private static readonly AutoFailoverOptions Quick = new()
    {
        NodeUnhealthyAfter = TimeSpan.FromSeconds(5),
        PrimaryDemoteTimeout = TimeSpan.FromSeconds(5),
    };

    [Fact]
    public async Task When_the_primary_dies_the_secondary_is_promoted_with_every_committed_row()
    {
        var ct = TestContext.Current.CancellationToken;
        if (OwnedAutoFailoverCluster.Unavailable() is { } missing)
        {
            ExternalTools.Unavailable(OwnedAutoFailoverCluster.Tool, missing);
        }

        await using var cluster = await OwnedAutoFailoverCluster.StartAsync(Quick, ct);
        Assert.NotEqual(string.Empty, await ScalarAsync(await cluster.PrimaryConnectionStringAsync(ct), "SHOW synchronous_standby_names", ct));
        await ScalarAsync(cluster.MultiHostConnectionString, "CREATE TABLE acknowledged (id int); INSERT INTO acknowledged SELECT generate_series(1, 100)", ct);

        var killed = await cluster.KillPrimaryPostmasterAsync(ct);
        var promoted = await cluster.WaitForPrimaryChangeAsync(killed, TimeSpan.FromSeconds(120), ct);

        Assert.NotEqual(killed.Port, promoted.Port);
        NpgsqlConnection.ClearAllPools();
        Assert.Equal("100", await ScalarAsync(cluster.MultiHostConnectionString, "SELECT count(*) FROM acknowledged", ct));
        Assert.Equal("False", await ScalarAsync(await cluster.PrimaryConnectionStringAsync(ct), "SELECT pg_is_in_recovery()", ct));
    }

    /// <summary>Runs <paramref name="sql"/> on a fresh connection and returns its first row's first column as text ("" for none).</summary>
    [SuppressMessage("Security", "CA2100:Review SQL queries for security vulnerabilities", Justification = "The test's own constant SQL.")]
    private static async Task<string> ScalarAsync(string connectionString, string sql, CancellationToken ct)
    {
        await using var connection = new NpgsqlConnection(connectionString);
        await connection.OpenAsync(ct);
        await using var command = new NpgsqlCommand(sql, connection);
        return Convert.ToString(await command.ExecuteScalarAsync(ct), System.Globalization.CultureInfo.InvariantCulture) ?? string.Empty;
    }
}
