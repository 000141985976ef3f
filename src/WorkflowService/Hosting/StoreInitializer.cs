using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Hosting;

/// <summary>
/// Creates the store's schema at start-up, before any request or worker touches it. A store that cannot be reached or
/// prepared ends the start with one line that says why (<see cref="StoreStartupException"/>); an orchestrator restarts the
/// node, and the database's own start is not waited for here.
/// </summary>
public sealed partial class StoreInitializer(IStoreSchema store, IStoreFailures failures, StoreProvider provider,
    IEnumerable<IStoreReplication> replication, IOptions<HealthOptions> health, ILogger<StoreInitializer> logger)
    : IHostedService
{
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        try
        {
            await store.InitializeAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not StoreSchemaException and not OperationCanceledException)
        {
            // The driver's own words, on one line; never the connection string (drivers do not repeat its password).
            var reason = (failures.IsUnavailable(e) ? failures.DescribeUnavailable(e) : e.GetBaseException().Message).ReplaceLineEndings(" ").TrimEnd('.', ' ');
            throw new StoreStartupException(
                $"The {provider} store could not be reached or prepared at start-up: {reason}. Check Store:ConnectionString, and that the database is up and lets this node in.",
                e);
        }

        LogReady(logger, provider);
        foreach (var server in replication)
        {
            await DescribeReplicationAsync(server, cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Says at start-up how the store's commits are replicated (the server warns itself when acknowledged writes could be
    /// lost on failover), within Health:StoreTimeout: a server slow to answer this delays the start by no more.
    /// </summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "Informational: the store answered already, and /health/ready asks again.")]
    private async Task DescribeReplicationAsync(IStoreReplication server, CancellationToken cancellationToken)
    {
        using var bounded = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        bounded.CancelAfter(health.Value.StoreTimeout);
        try
        {
            var replication = await server.DescribeAsync(bounded.Token).WaitAsync(bounded.Token).ConfigureAwait(false);
            LogReplication(logger, replication);
        }
        catch (Exception e) when (!cancellationToken.IsCancellationRequested)
        {
            LogReplicationUnknown(logger, e);
        }
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    [LoggerMessage(Level = LogLevel.Information, Message = "Workflow store replication: {Replication}")]
    private static partial void LogReplication(ILogger logger, string replication);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Workflow store replication could not be read at start-up; /health/ready asks again")]
    private static partial void LogReplicationUnknown(ILogger logger, Exception exception);

    [LoggerMessage(Level = LogLevel.Information, Message = "Workflow store {Provider} is ready")]
    private static partial void LogReady(ILogger logger, StoreProvider provider);
}
