using WorkflowService.Engine.Persistence;

namespace WorkflowService.Hosting;

/// <summary>Creates the store's schema at start-up, before any request or worker touches it.</summary>
public sealed partial class StoreInitializer(IStoreSchema store, StoreProvider provider, ILogger<StoreInitializer> logger) : IHostedService
{
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        await store.InitializeAsync(cancellationToken).ConfigureAwait(false);
        LogReady(logger, provider);
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    [LoggerMessage(Level = LogLevel.Information, Message = "Workflow store {Provider} is ready")]
    private static partial void LogReady(ILogger logger, StoreProvider provider);
}
