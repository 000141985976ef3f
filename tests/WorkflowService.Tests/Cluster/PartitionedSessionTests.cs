using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Npgsql;
using WorkflowService.Hosting;
using WorkflowService.Tests.Backends;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// Regression (found by the fault runner's partition row): a node cut off from PostgreSQL in the middle of a commit kept
/// its transaction, and so its row locks, open on the server, which cannot tell a partition from a slow client; the other
/// nodes' claims skip locked rows, so the cut-off node's claims were not taken over when their leases expired. The store's
/// sessions now end on the server once idle inside a transaction for longer than a lease.
/// </summary>
public sealed class PartitionedSessionTests
{
    [Fact]
    public async Task A_store_session_left_idle_inside_a_transaction_for_longer_than_a_lease_is_ended_and_its_locks_released()
    {
        await using var database = await new PostgresBackend().CreateDatabaseAsync();
        var services = new ServiceCollection().AddLogging().AddSingleton(TimeProvider.System);
        var settings = new Dictionary<string, string?>(database.Settings) { ["Workers:LeaseDuration"] = "00:00:01" };
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(settings).Build();
        services.AddWorkflowBackend(configuration);
        services.AddOptions<WorkflowService.Engine.Runtime.WorkerOptions>().Bind(configuration.GetSection("Workers"));
        await using var provider = services.BuildServiceProvider();
        var store = provider.GetRequiredService<NpgsqlDataSource>();

        // The cut-off node: inside a transaction, holding a lock, and then silent.
        await using var cutOff = await store.OpenConnectionAsync(TestContext.Current.CancellationToken);
        await using var transaction = await cutOff.BeginTransactionAsync(TestContext.Current.CancellationToken);
        await using (var take = new NpgsqlCommand("SELECT pg_advisory_xact_lock(4242)", cutOff, transaction))
        {
            await take.ExecuteNonQueryAsync(TestContext.Current.CancellationToken);
        }

        // Another node waits for the same lock: it gets it once the server has ended the silent session (a lease later),
        // well within the statement timeout that bounds the wait.
        await using var other = new NpgsqlConnection(new NpgsqlConnectionStringBuilder((string)settings["Store:ConnectionString"]!) { Pooling = false }.ConnectionString);
        await other.OpenAsync(TestContext.Current.CancellationToken);
        await using (var bound = new NpgsqlCommand("SET statement_timeout = '20s'", other))
        {
            await bound.ExecuteNonQueryAsync(TestContext.Current.CancellationToken);
        }

        await using (var wait = new NpgsqlCommand("SELECT pg_advisory_lock(4242)", other))
        {
            await wait.ExecuteNonQueryAsync(TestContext.Current.CancellationToken);
        }

        // The silent session's late commit is refused: its transaction is gone.
        await Assert.ThrowsAnyAsync<Exception>(() => transaction.CommitAsync(TestContext.Current.CancellationToken));
    }
}
