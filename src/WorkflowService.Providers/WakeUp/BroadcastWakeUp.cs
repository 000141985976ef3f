using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Text;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Providers.WakeUp;

/// <summary>
/// Wake-ups across nodes over an <see cref="IWakeUpBus"/>. Two hints travel: "a signal is due by then" (wakes the
/// workers) and "these instances committed" (wakes the long-polls waiting on them, through
/// <see cref="InstanceChangeFeed.Hint"/>). Both are sent outside the commit and coalesced: while one message is on
/// its way, every hint that arrives meanwhile goes into the next one, so a burst costs a few messages, not one a
/// commit. A node ignores its own echo (its own hints already woke it in process). The listening side reconnects with
/// capped, jittered backoff (Polly); while it is down the node runs on its bounded poll and long-poll re-check and
/// reports itself degraded. Nothing is lost by a lost hint: the store is the truth.
/// </summary>
/// <remarks>
/// A hint is sent only while another node may listen: every node says that it listens when its listener opens and every
/// <see cref="PeerAnnounceInterval"/> after that (an empty message), and answers a node it has not heard before at once.
/// A node withholds its hints only while its own listener has been open for <see cref="AnnounceGrace"/> or more and it
/// has heard no other node within <see cref="PeerSilence"/>: a single node then sends nothing its database would
/// deliver to no one. While its listener is down, or just opened, it cannot know, and sends.
/// </remarks>
public sealed partial class BroadcastWakeUp(
    IWakeUpBus bus, InProcessWakeUp local, InstanceChangeFeed changes, NodeIdentity node, TimeProvider time, ILogger<BroadcastWakeUp> logger)
    : IListeningWakeUpTransport, IHostedService, IAsyncDisposable
{
    /// <summary>The longest message sent: within PostgreSQL's 8,000-byte NOTIFY payload.</summary>
    public const int MaxMessageLength = 7000;

    /// <summary>Instance ids one message carries ("N" format, 32 characters and a comma each).</summary>
    private const int IdsPerMessage = (MaxMessageLength - 64) / 33;

    /// <summary>Instance changes waiting to be sent; more are dropped (counted), the long-poll re-check finds them.</summary>
    private const int MaxPendingChanges = 50_000;

    private static readonly TimeSpan MaxBackoff = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan SendTimeout = TimeSpan.FromSeconds(5);

    /// <summary>Failed reconnects in a row before the listener gives up (about eight hours at the 30 s cap).</summary>
    private const int MaxReconnects = 1000;

    /// <summary>Senders a node remembers having heard, to answer a new one at once; more are forgotten together.</summary>
    private const int MaxPeersRemembered = 1000;

    /// <summary>How often a node says that it listens, when it has sent nothing else meanwhile.</summary>
    public static readonly TimeSpan PeerAnnounceInterval = TimeSpan.FromSeconds(10);

    /// <summary>How long after the last word from another node this one still sends hints (three announcements and a half).</summary>
    public static readonly TimeSpan PeerSilence = TimeSpan.FromSeconds(35);

    /// <summary>How long after its listener opened a node waits for the other nodes' answers before it withholds hints.</summary>
    public static readonly TimeSpan AnnounceGrace = TimeSpan.FromSeconds(2);

    private readonly CancellationTokenSource _stopping = new();
    private readonly SemaphoreSlim _sendRequested = new(0, 1);
    private readonly ConcurrentQueue<Guid> _changed = new();
    private readonly string _senderId = Guid.NewGuid().ToString("N");
    private long _pendingDueMs = long.MaxValue;
    private int _pendingChanges;
    private int _disposed;
    private Task _listener = Task.CompletedTask;
    private Task _sender = Task.CompletedTask;
    private long _requested;
    private long _sent;
    private long _dropped;
    private long _received;
    private long _withheld;
    private long _lastPeerHeard;
    private long _lastSent;
    private long _listeningSince;
    private int _announceRequested;
    private readonly ConcurrentDictionary<string, bool> _peers = new(StringComparer.Ordinal);

    // After MaxReconnects failures in a row the listener gives up and the node reports itself unhealthy, so that an
    // orchestrator replaces it.
    private readonly ReconnectingListener _listening = new(bus.Name, MaxReconnects, MaxBackoff, time, logger);

    public bool IsHealthy => _listening.IsListening;

    /// <summary>True once the listener stopped reconnecting: the node then needs replacing, not just patience.</summary>
    public bool HasGivenUp => _listening.HasGivenUp;

    /// <summary>Hints asked for by this node's commits (signals due and instances committed).</summary>
    public long NotificationsRequested => Interlocked.Read(ref _requested);

    /// <summary>Messages actually sent: fewer than requested when hints come faster than one message.</summary>
    public long NotificationsSent => Interlocked.Read(ref _sent);

    /// <summary>Instance changes not sent: too many were waiting (the bus is down or slow), or their message failed.</summary>
    public long ChangesDropped => Interlocked.Read(ref _dropped);

    /// <summary>Hints not sent because no other node was listening.</summary>
    public long NotificationsWithheld => Interlocked.Read(ref _withheld);

    /// <summary>Whether another node has said within <see cref="PeerSilence"/> that it listens.</summary>
    public bool PeersListening
    {
        get
        {
            var heard = Interlocked.Read(ref _lastPeerHeard);
            return heard != 0 && time.GetElapsedTime(heard) < PeerSilence;
        }
    }

    /// <summary>
    /// Whether hints would reach no one: this node's listener has been open long enough to have heard the others, and
    /// it heard none lately. False while it is down or has just opened: then it cannot tell, and sends.
    /// </summary>
    public bool WithholdingHints => _listening.IsListening
        && time.GetElapsedTime(Interlocked.Read(ref _listeningSince)) >= AnnounceGrace
        && !PeersListening;

    /// <summary>Messages received from other nodes (this node's own echo is not counted: it is ignored).</summary>
    public long NotificationsReceived => Interlocked.Read(ref _received);

    /// <summary>How many times the listener has subscribed (1 when it never had to reconnect).</summary>
    public long Subscriptions => _listening.Subscriptions;

    /// <summary>The bus, for operators and tests.</summary>
    public IWakeUpBus Bus => bus;

    public void Notify(long dueAtMs)
    {
        local.Notify(dueAtMs);
        Interlocked.Increment(ref _requested);
        // Keep the earliest due time among hints not yet sent.
        long current;
        do
        {
            current = Interlocked.Read(ref _pendingDueMs);
            if (current <= dueAtMs)
            {
                break;
            }
        }
        while (Interlocked.CompareExchange(ref _pendingDueMs, dueAtMs, current) != current);

        RequestSend();
    }

    public void Committed(Guid instanceId)
    {
        Interlocked.Increment(ref _requested);
        if (Interlocked.Increment(ref _pendingChanges) > MaxPendingChanges)
        {
            Interlocked.Decrement(ref _pendingChanges);
            Interlocked.Increment(ref _dropped);
            return;
        }

        _changed.Enqueue(instanceId);
        RequestSend();
    }

    public Task<bool> WaitAsync(long untilMs, CancellationToken cancellationToken) => local.WaitAsync(untilMs, cancellationToken);

    public Task StartAsync(CancellationToken cancellationToken)
    {
        _listener = Task.Run(() => ListenAsync(_stopping.Token), CancellationToken.None);
        _sender = Task.Run(() => SendAsync(_stopping.Token), CancellationToken.None);
        return Task.CompletedTask;
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (Volatile.Read(ref _disposed) == 1)
        {
            return;
        }

        await _stopping.CancelAsync().ConfigureAwait(false);
        await Task.WhenAll(_listener, _sender).WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>"sender|due|id,id,…": due is empty when only instances changed, the ids when only a signal is due.</summary>
    internal static string Format(string sender, long dueMs, IReadOnlyCollection<Guid> changed)
    {
        var text = new StringBuilder(sender.Length + 24 + (changed.Count * 33)).Append(sender).Append('|');
        if (dueMs != long.MaxValue)
        {
            text.Append(dueMs.ToString(CultureInfo.InvariantCulture));
        }

        text.Append('|');
        var first = true;
        foreach (var id in changed)
        {
            text.Append(first ? "" : ",").Append(id.ToString("N"));
            first = false;
        }

        return text.ToString();
    }

    /// <summary>A message of another node: wakes the workers when a signal is due, and the long-polls of the changed instances.</summary>
    internal void Receive(string message)
    {
        var parts = message.Split('|');
        if (parts.Length != 3 || parts[0] == _senderId)
        {
            return;
        }

        Interlocked.Increment(ref _received);
        Interlocked.Exchange(ref _lastPeerHeard, time.GetTimestamp());
        if (_peers.Count >= MaxPeersRemembered)
        {
            // Senders of nodes long gone (every restart is a new sender): forget them all; the live ones are new again
            // at their next word, which costs one announcement each.
            _peers.Clear();
        }

        if (_peers.TryAdd(parts[0], true))
        {
            // A node not heard before (a new one): tell it at once that this one listens too.
            Announce();
        }

        if (parts[1].Length > 0)
        {
            local.Notify(long.TryParse(parts[1], NumberStyles.Integer, CultureInfo.InvariantCulture, out var due) ? due : 0);
        }

        foreach (var id in parts[2].Split(',', StringSplitOptions.RemoveEmptyEntries))
        {
            if (Guid.TryParseExact(id, "N", out var instanceId))
            {
                changes.Hint(instanceId);
            }
        }
    }

    /// <summary>Asks the sender for an empty message: "this node listens".</summary>
    private void Announce()
    {
        Interlocked.Exchange(ref _announceRequested, 1);
        RequestSend();
    }

    private void RequestSend()
    {
        if (_sendRequested.CurrentCount == 0 && Volatile.Read(ref _disposed) == 0)
        {
            try
            {
                _sendRequested.Release();
            }
            catch (SemaphoreFullException)
            {
                // Already requested by a concurrent caller: coalesced.
            }
            catch (ObjectDisposedException)
            {
                // The node is shutting down: the commit stands, its hint is not needed.
            }
        }
    }

    private Task ListenAsync(CancellationToken stopping) => _listening.RunAsync(ListenOnceAsync, down: null, stopping);

    /// <summary>One subscription, held until it breaks (a failure to subscribe throws, for the retry).</summary>
    private Task ListenOnceAsync(CancellationToken stopping) =>
        bus.ListenAsync(Receive, description =>
        {
            _listening.Opened(description);
            Interlocked.Exchange(ref _listeningSince, time.GetTimestamp());
            // Anything committed while nobody listened is due now: look once. And tell the other nodes this one listens.
            local.Notify(0);
            Announce();
        }, stopping);

    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "A background sender: a lost hint only delays other nodes until their next poll or re-check, so any failure is logged and the loop goes on.")]
    private async Task SendAsync(CancellationToken stopping)
    {
        var batch = new HashSet<Guid>();
        while (!stopping.IsCancellationRequested)
        {
            try
            {
                await _sendRequested.WaitAsync(PeerAnnounceInterval, stopping).ConfigureAwait(false);
                // Said again when nothing went out for an interval (a node withholding its hints sends nothing else).
                if (time.GetElapsedTime(Interlocked.Read(ref _lastSent)) >= PeerAnnounceInterval)
                {
                    Interlocked.Exchange(ref _announceRequested, 1);
                }

                var due = Interlocked.Exchange(ref _pendingDueMs, long.MaxValue);
                var announce = Interlocked.Exchange(ref _announceRequested, 0) == 1;
                var peers = !WithholdingHints;
                do
                {
                    batch.Clear();
                    while (batch.Count < IdsPerMessage && _changed.TryDequeue(out var id))
                    {
                        Interlocked.Decrement(ref _pendingChanges);
                        batch.Add(id);
                    }

                    if (!peers)
                    {
                        // Nobody would hear the hints; the announcement (empty) still goes.
                        Interlocked.Add(ref _withheld, batch.Count + (due == long.MaxValue ? 0 : 1));
                        batch.Clear();
                        due = long.MaxValue;
                    }

                    if (due == long.MaxValue && batch.Count == 0 && !announce)
                    {
                        break;
                    }

                    using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
                    timeout.CancelAfter(SendTimeout);
                    using var span = EngineTelemetry.StartWakeUp(node.Id, bus.Name, due != long.MaxValue, batch.Count);
                    try
                    {
                        await bus.PublishAsync(Format(_senderId, due, batch), timeout.Token).ConfigureAwait(false);
                    }
                    catch (Exception e)
                    {
                        EngineTelemetry.Failed(span, e.GetType().Name);
                        throw;
                    }

                    Interlocked.Increment(ref _sent);
                    Interlocked.Exchange(ref _lastSent, time.GetTimestamp());
                    due = long.MaxValue;
                    announce = false;
                }
                while (!_changed.IsEmpty);
            }
            catch (OperationCanceledException) when (stopping.IsCancellationRequested)
            {
                break;
            }
            catch (Exception e)
            {
                // A lost hint only delays other nodes until their next poll or re-check; what is still queued goes next.
                Interlocked.Add(ref _dropped, batch.Count);
                LogSendFailed(logger, e, bus.Name);
                if (!_changed.IsEmpty)
                {
                    RequestSend();
                }
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        // Registered under several service types, so the container may dispose it more than once.
        if (Interlocked.Exchange(ref _disposed, 1) == 1)
        {
            return;
        }

        await _stopping.CancelAsync().ConfigureAwait(false);
        await Task.WhenAll(_listener, _sender).WaitAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
        _stopping.Dispose();
        _sendRequested.Dispose();
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Sending a wake-up ({Bus}) failed; other nodes will see the work at their next poll")]
    private static partial void LogSendFailed(ILogger logger, Exception exception, string bus);
}
