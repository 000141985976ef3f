using Microsoft.Extensions.Diagnostics.HealthChecks;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Hosting;

/// <summary>Ready when the store answers; degraded when wake-ups are down and the node runs on its poll alone.</summary>
public sealed class StoreHealthCheck(ISignalQueue store, IWakeUpTransport wakeUp) : IHealthCheck
{
    public async Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        try
        {
            // Answers at Health:StoreTimeout even where the store call does not stop at its token (a driver opening a
            // connection, or sending a cancel request, to a server that does not answer): the call ends in the background.
            await store.GetNextDueAsync(cancellationToken).WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            return HealthCheckResult.Unhealthy("the workflow store does not answer");
        }

        if (wakeUp.HasGivenUp)
        {
            return HealthCheckResult.Unhealthy("wake-ups failed for good; restart this node");
        }

        return wakeUp.IsHealthy
            ? HealthCheckResult.Healthy()
            : HealthCheckResult.Degraded("wake-ups are down; signals are picked up by the poll only");
    }
}
