using Npgsql;
using WorkflowService.Storage.Relational.PostgreSql;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Cluster;

/// <summary>The cross-node contract on the PostgreSQL store's LISTEN/NOTIFY wake-ups.</summary>
public sealed class PostgresNotifyCrossNodeTests : BroadcastCrossNodeWakeUpTests<PostgresBackend>
{
    protected override async Task KillListenerAsync(WorkflowServiceFactory node, BackendDatabase database)
    {
        var bus = node.Get<PostgresNotifyBus>();
        await Eventually.WaitUntilAsync(() => bus.ListenerProcessId is not null);
        var pid = bus.ListenerProcessId!.Value;
        await using var admin = new NpgsqlConnection(database.Settings["Store:ConnectionString"]);
        await admin.OpenAsync(TestContext.Current.CancellationToken);
        await using var terminate = new NpgsqlCommand("SELECT pg_terminate_backend(@pid)", admin);
        terminate.Parameters.AddWithValue("pid", pid);
        Assert.True((bool)(await terminate.ExecuteScalarAsync(TestContext.Current.CancellationToken))!);
        await Eventually.WaitUntilAsync(() => bus.ListenerProcessId != pid, what: "the killed listener is noticed");
    }
}
