using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Providers.WakeUp;

/// <summary>
/// A wake-up transport that hears the other nodes through a listener of its own (a bus subscription, a change stream),
/// held open across failures by <see cref="ReconnectingListener"/>; <see cref="IWakeUpTransport.IsHealthy"/> says
/// whether it is open now. Its counters are what operators and the cross-node tests read of any such transport, whether
/// it sends messages (<see cref="BroadcastWakeUp"/>) or the store's own commits are the message.
/// </summary>
public interface IListeningWakeUpTransport : IWakeUpTransport
{
    /// <summary>Notifications the listener delivered (each transport says what it counts: a message, a change event).</summary>
    long NotificationsReceived { get; }

    /// <summary>How many times the listener was opened (1 when it never had to reconnect).</summary>
    long Subscriptions { get; }
}
