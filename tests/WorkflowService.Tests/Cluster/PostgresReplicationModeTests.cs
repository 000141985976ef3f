using System.Net.Http.Json;
using System.Text.Json;
using Npgsql;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Infrastructure;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// A node on a pg_auto_failover cluster whose secondary is asynchronous (replication-quorum false): what the node says of
/// that, and reads sent to the secondary. One cluster for the class (<see cref="AsynchronousCluster"/>).
/// </summary>
public sealed class PostgresReplicationModeTests(PostgresReplicationModeTests.AsynchronousCluster cluster)
    : IClassFixture<PostgresReplicationModeTests.AsynchronousCluster>
{
    private const string Warning = "Acknowledged writes can be lost on a failover of the PostgreSQL store: set synchronous_standby_names";

    [Fact]
    public async Task An_asynchronous_standby_is_warned_of_once_at_start_up_and_described_by_readiness()
    {
        var owned = cluster.Ready();
        await using var node = await TestServiceProcess.StartAsync("async", new Dictionary<string, string?>
        {
            ["Store:Provider"] = "PostgreSql",
            ["Store:ConnectionString"] = owned.MultiHostConnectionString,
        });
        using var client = node.CreateClient();
        var ct = TestContext.Current.CancellationToken;

        string? description = null;
        for (var probe = 0; probe < 2; probe++)
        {
            using var ready = await client.GetAsync("/health/ready", ct);
            using var report = JsonDocument.Parse(await ready.Content.ReadAsStringAsync(ct));
            description = report.RootElement.GetProperty("checks").GetProperty("store").GetProperty("description").GetString();
        }

        Assert.Equal("postgres: primary, 1 asynchronous standby: acknowledged writes can be lost on failover (synchronous_standby_names is empty)", description);
        await Eventually.WaitUntilAsync(() => node.OutputLines.Any(l => l.Contains(Warning, StringComparison.Ordinal)), what: "the start-up warning");
        Assert.Single(node.OutputLines, l => l.Contains(Warning, StringComparison.Ordinal));
    }

    [Fact]
    public async Task Operator_lists_are_read_on_the_standby_and_nothing_else_is()
    {
        var owned = cluster.Ready();
        var ct = TestContext.Current.CancellationToken;
        var (primary, standby) = (await owned.PrimaryConnectionStringAsync(ct), await owned.StandbyConnectionStringAsync(ct));
        await using var node = new WorkflowServiceFactory(new()
        {
            ["Store:Provider"] = "PostgreSql",
            ["Store:ConnectionString"] = primary + ";Application Name=workflow-store",
            ["Store:ReadConnectionString"] = standby,
        });
        var api = new ApiClient(node.CreateClient());
        var name = Definitions.Unique("reads");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await api.StartAsync(name);

        // Its own read is on the primary: current at once. The list is on the standby: current once replayed there.
        Assert.Equal(instance.Id, (await api.GetAsync(instance.Id)).Id);
        await Eventually.WaitUntilAsync(async () =>
            (await api.Http.GetFromJsonAsync<PageView<InstanceSummaryView>>($"/instances?definition={name}", WorkflowServiceFactory.Json, ct))!
                .Items.Any(i => i.Id == instance.Id), what: "the list shows the instance");

        Assert.True(await SessionsAsync(standby, "workflow-reads", ct) >= 1, "the list was read on the standby");
        Assert.Equal(0, await SessionsAsync(standby, "workflow-store%", ct));
        Assert.Equal(0, await SessionsAsync(primary, "workflow-reads", ct));
    }

    /// <summary>How many sessions on the server of <paramref name="connectionString"/> carry an application name like <paramref name="pattern"/>.</summary>
    private static async Task<long> SessionsAsync(string connectionString, string pattern, CancellationToken ct)
    {
        await using var connection = new NpgsqlConnection(connectionString);
        await connection.OpenAsync(ct);
        await using var command = new NpgsqlCommand("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE @pattern", connection);
        command.Parameters.AddWithValue("pattern", pattern);
        return (long)(await command.ExecuteScalarAsync(ct))!;
    }

    /// <summary>A cluster whose secondary is out of the write quorum, for the class; nothing is killed.</summary>
    public sealed class AsynchronousCluster() : AutoFailoverClusterFixture(new AutoFailoverOptions { Replication = AutoFailoverReplication.Asynchronous })
    {
        internal OwnedAutoFailoverCluster Ready()
        {
            SkipUnlessOwned();
            return Cluster;
        }
    }
}
