using Microsoft.Extensions.Diagnostics.HealthChecks;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Hosting;

/// <summary>
/// Ready when the store answers; degraded when wake-ups are down and the node runs on its poll alone. The description says
/// how the store's commits are replicated, where its server can tell (asked again on every check, within its timeout).
/// </summary>
public sealed class StoreHealthCheck(ISignalQueue store, IWakeUpTransport wakeUp, IEnumerable<IStoreReplication> replication) : IHealthCheck
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

        var replicated = await DescribeReplicationAsync(cancellationToken).ConfigureAwait(false);
        return wakeUp.IsHealthy
            ? HealthCheckResult.Healthy(replicated)
            : HealthCheckResult.Degraded(replicated is null
                ? "wake-ups are down; signals are picked up by the poll only"
                : "wake-ups are down; signals are picked up by the poll only; " + replicated);
    }

    /// <summary>The store's replication in one line, or null where its server cannot tell; a failure to ask is said, not fatal.</summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "The store answered; its replication is information, and a failure to read it does not take the node out of rotation.")]
    private async Task<string?> DescribeReplicationAsync(CancellationToken cancellationToken)
    {
        string? described = null;
        foreach (var server in replication)
        {
            try
            {
                described = await server.DescribeAsync(cancellationToken).WaitAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                described = "replication unknown (the server did not say)";
            }
        }

        return described;
    }
}
