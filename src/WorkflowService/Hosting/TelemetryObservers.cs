using WorkflowService.Api;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Providers.WakeUp;

namespace WorkflowService.Hosting;

/// <summary>
/// The instruments read only when a collector asks, registered once the node's parts exist: the long-polls it holds and
/// the wake-up messages it asked for, sent and received. Reading them costs the hot path nothing.
/// </summary>
internal sealed class TelemetryObservers(EngineMetrics metrics, LongPollGate longPolls, IWakeUpTransport wakeUp) : IHostedService
{
    public Task StartAsync(CancellationToken cancellationToken)
    {
        metrics.ObserveUpDown("workflow.longpolls.active", "{request}",
            "long-polls (GET /instances/{id}?waitFor=…) this node holds now", () => longPolls.InUse);
        metrics.ObserveTotal("workflow.wakeups.requested", "{message}",
            "wake-ups this node's commits asked to send to other nodes", () => wakeUp.NotificationsRequested);
        metrics.ObserveTotal("workflow.wakeups.sent", "{message}",
            "wake-up messages this node sent (fewer than requested: coalesced while one is on its way)", () => wakeUp.NotificationsSent);
        if (wakeUp is BroadcastWakeUp broadcast)
        {
            metrics.ObserveTotal("workflow.wakeups.received", "{message}",
                "wake-up messages this node received from other nodes (its own echo not counted)", () => broadcast.NotificationsReceived);
        }

        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
}
