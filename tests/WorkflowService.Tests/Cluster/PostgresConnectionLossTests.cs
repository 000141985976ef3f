using System.Net.Http.Json;
using Npgsql;
using WorkflowService.Engine.Persistence;
using WorkflowService.Storage.Relational.PostgreSql;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;
using WorkflowService.Api;

namespace WorkflowService.Tests.Cluster;

/// <summary>The store's long-lived and pooled connections after the server dropped them (a restart, a failover).</summary>
public sealed class PostgresConnectionLossTests : ServiceTest<PostgresBackend>
{
    // Each test starts a node of its own on a database of its own, whose connections it kills or inspects.
    protected override bool UsesDefaultService => false;

    [Fact]
    public async Task With_every_connection_of_the_node_killed_the_next_start_signal_and_read_still_succeed()
    {
        var database = await CreateDatabaseAsync();
        var (_, api) = await StartServiceAsync(new() { ["Workers:PollInterval"] = "00:00:01" }, database: database);
        var name = Definitions.Unique("dropped");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var first = await api.StartAsync(name);
        await api.SignalAsync(first.Id, "go", new { value = 1 });
        await api.WaitForAsync(first.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));

        // Every connection the node holds dies: the group-commit writers', the pooled readers', the listener's.
        await using (var admin = new NpgsqlConnection(database.Settings["Store:ConnectionString"]))
        {
            await admin.OpenAsync(TestContext.Current.CancellationToken);
            await using var terminate = new NpgsqlCommand(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()", admin);
            Assert.True((long)(await terminate.ExecuteScalarAsync(TestContext.Current.CancellationToken))! >= 1);
        }

        var second = await api.StartAsync(name);
        await api.SignalAsync(second.Id, "go", new { value = 2 });
        var done = await api.WaitForAsync(second.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));
        Assert.Equal(2, done.Output!.Value.GetProperty("result").GetInt32());
    }

    [Fact]
    public async Task A_server_that_turned_read_only_is_answered_503_with_retry_after_and_writes_resume_once_it_takes_them()
    {
        var database = await CreateDatabaseAsync();
        var (_, api) = await StartServiceAsync([], database: database);
        var name = Definitions.Unique("read-only");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));

        // What a demoted primary answers a write (25006): its sessions are new ones on a read-only server.
        await ReadOnlyAsync(database, true);
        using var refused = await api.Http.PostAsJsonAsync("/instances", new { definition = name }, WorkflowServiceFactory.Json, TestContext.Current.CancellationToken);
        Assert.Equal(System.Net.HttpStatusCode.ServiceUnavailable, refused.StatusCode);
        Assert.NotNull(refused.Headers.RetryAfter);

        await ReadOnlyAsync(database, false);
        var started = await api.StartAsync(name);
        await api.SignalAsync(started.Id, "go", new { value = 4 });
        Assert.Equal(4, (await api.WaitForAsync(started.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60))).Output!.Value.GetProperty("result").GetInt32());
    }

    /// <summary>Makes the test's database refuse (or take) writes in every session, and ends the sessions it has.</summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Security", "CA2100:Review SQL queries for security vulnerabilities", Justification = "The test's own database name, made by the test.")]
    private static async Task ReadOnlyAsync(BackendDatabase database, bool readOnly)
    {
        var connection = new NpgsqlConnectionStringBuilder(database.Settings["Store:ConnectionString"]);
        var name = connection.Database!;
        connection.Database = "postgres";
        await using var admin = new NpgsqlConnection(connection.ConnectionString);
        await admin.OpenAsync(TestContext.Current.CancellationToken);
        await using (var alter = new NpgsqlCommand($"ALTER DATABASE {name} SET default_transaction_read_only = {(readOnly ? "on" : "off")}", admin))
        {
            await alter.ExecuteNonQueryAsync(TestContext.Current.CancellationToken);
        }

        await using var terminate = new NpgsqlCommand("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = @name", admin);
        terminate.Parameters.AddWithValue("name", name);
        await terminate.ExecuteScalarAsync(TestContext.Current.CancellationToken);
    }

    [Fact]
    public async Task Claims_commit_without_waiting_for_the_wal_flush_while_every_other_write_waits_for_it()
    {
        var (factory, api) = await StartServiceAsync([]);
        var name = Definitions.Unique("claim-commit");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await api.StartAsync(name);
        await api.SignalAsync(started.Id, "go", new { value = 3 });
        await api.WaitForAsync(started.Id, InstanceStatus.Completed, TimeSpan.FromSeconds(60));

        async Task<string> SynchronousCommitOf(NpgsqlDataSource source)
        {
            await using var command = source.CreateCommand("SHOW synchronous_commit");
            return (string)(await command.ExecuteScalarAsync(TestContext.Current.CancellationToken))!;
        }

        Assert.Equal("off", await SynchronousCommitOf(factory.Get<PostgresClaimDataSource>().Source));
        Assert.Equal("on", await SynchronousCommitOf(factory.Get<NpgsqlDataSource>()));
    }
}
