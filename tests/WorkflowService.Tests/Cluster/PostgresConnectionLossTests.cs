using Npgsql;
using WorkflowService.Engine.Persistence;
using WorkflowService.Storage.Relational.PostgreSql;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

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
