namespace WorkflowService.Providers.WakeUp;

/// <summary>
/// The wire a <see cref="BroadcastWakeUp"/> sends its hints over (PostgreSQL LISTEN/NOTIFY, Redis pub/sub): text
/// messages to every node, at most once, in no promised order. The broadcaster owns everything else (coalescing, the
/// node's own echo, reconnecting, health), so a bus is one small file.
/// </summary>
public interface IWakeUpBus
{
    /// <summary>What the bus is, for logs ("PostgreSQL LISTEN/NOTIFY").</summary>
    string Name { get; }

    /// <summary>
    /// Connects and subscribes (a failure to do so throws), calls <paramref name="listening"/> with a description of
    /// the subscription (for the log), then hands every message to <paramref name="received"/> until the connection
    /// breaks (throws) or <paramref name="stopping"/> is cancelled. Called again, after a backoff, when it throws.
    /// </summary>
    Task ListenAsync(Action<string> received, Action<string> listening, CancellationToken stopping);

    /// <summary>Sends <paramref name="message"/> (at most <see cref="BroadcastWakeUp.MaxMessageLength"/> characters) to every node.</summary>
    Task PublishAsync(string message, CancellationToken cancellationToken);
}
