using WorkflowService.Engine.Persistence;

namespace WorkflowService.Hosting;

/// <summary>
/// Creates the store's schema at start-up, before any request or worker touches it. A store that cannot be reached or
/// prepared ends the start with one line that says why (<see cref="StoreStartupException"/>); an orchestrator restarts the
/// node, and the database's own start is not waited for here.
/// </summary>
public sealed partial class StoreInitializer(IStoreSchema store, IStoreFailures failures, StoreProvider provider, ILogger<StoreInitializer> logger)
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
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    [LoggerMessage(Level = LogLevel.Information, Message = "Workflow store {Provider} is ready")]
    private static partial void LogReady(ILogger logger, StoreProvider provider);
}
