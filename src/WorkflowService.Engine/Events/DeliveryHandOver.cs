using System.Collections.Concurrent;
using System.Threading.Channels;
using Microsoft.Extensions.Options;

namespace WorkflowService.Engine.Events;

/// <summary>
/// Deliveries this node's commits wrote already leased to this node (see <see cref="EventOutbox.Collect"/>): the dispatcher
/// posts them from memory, without a claim. Bounded by <see cref="EventOptions.HandOverCapacity"/>: a commit made while it
/// is full writes its deliveries unleased, for the claim. One that finds it full after its commit (a few commits at once
/// near the bound) keeps its lease until it runs out and is claimed then: late, never lost.
/// </summary>
public sealed class DeliveryHandOver
{
    private readonly Channel<EventDelivery> _queue;
    private readonly int _capacity;
    private readonly ConcurrentDictionary<(Guid Subscription, Guid Instance), byte> _inFlight = new();
    private int _tailsWritten;

    public DeliveryHandOver(IOptions<EventOptions> options)
    {
        ArgumentNullException.ThrowIfNull(options);
        _capacity = options.Value.HandOverCapacity;
        _queue = Channel.CreateBounded<EventDelivery>(new BoundedChannelOptions(Math.Max(1, _capacity))
        {
            // The hand-over loop may wait for the next delivery while another wait of its own is still pending.
            SingleReader = false,
            FullMode = BoundedChannelFullMode.Wait,
        });
    }

    /// <summary>Whether a commit made now may lease its deliveries to this node.</summary>
    public bool HasRoom => _queue.Reader.Count < _capacity;

    /// <summary>Queues a delivery its commit leased to this node; false when the queue is full (its lease runs out, then it is claimed).</summary>
    public bool TryAdd(EventDelivery delivery)
    {
        ArgumentNullException.ThrowIfNull(delivery);
        // At most one per instance and subscription: the commit leases one only when none of them is pending.
        _inFlight[(delivery.SubscriptionId, delivery.InstanceId)] = 0;
        if (_queue.Writer.TryWrite(delivery))
        {
            return true;
        }

        _inFlight.TryRemove((delivery.SubscriptionId, delivery.InstanceId), out _);
        return false;
    }

    /// <summary>
    /// Whether a delivery of this instance to this subscription is handed over and not yet settled: a later one waits for it,
    /// and the claim is told to look once it is settled rather than now.
    /// </summary>
    public bool IsInFlight(EventDelivery delivery) =>
        delivery is not null && _inFlight.ContainsKey((delivery.SubscriptionId, delivery.InstanceId));

    /// <summary>The handed-over deliveries were settled (or given up, their leases left to run out).</summary>
    public void Settled(IEnumerable<EventDelivery> deliveries)
    {
        ArgumentNullException.ThrowIfNull(deliveries);
        foreach (var delivery in deliveries)
        {
            _inFlight.TryRemove((delivery.SubscriptionId, delivery.InstanceId), out _);
        }
    }

    /// <summary>
    /// A commit wrote deliveries that wait for the claim, some perhaps behind one handed over: after the next hand-over
    /// settles, the claim looks at once (<see cref="TakeTailsWritten"/>).
    /// </summary>
    public void TailsWritten() => Volatile.Write(ref _tailsWritten, 1);

    /// <summary>Whether deliveries for the claim were written since the last call.</summary>
    public bool TakeTailsWritten() => Interlocked.Exchange(ref _tailsWritten, 0) == 1;

    /// <summary>Up to <paramref name="max"/> handed-over deliveries: waits for the first, then takes what is there.</summary>
    public async ValueTask<List<EventDelivery>> TakeAsync(int max, CancellationToken cancellationToken)
    {
        var taken = new List<EventDelivery>();
        while (taken.Count == 0 && await _queue.Reader.WaitToReadAsync(cancellationToken).ConfigureAwait(false))
        {
            taken = TakeNow(max);
        }

        return taken;
    }

    /// <summary>Up to <paramref name="max"/> handed-over deliveries that are there now; none when there are none.</summary>
    public List<EventDelivery> TakeNow(int max)
    {
        var taken = new List<EventDelivery>();
        while (taken.Count < max && _queue.Reader.TryRead(out var delivery))
        {
            taken.Add(delivery);
        }

        return taken;
    }

    /// <summary>Completes when a delivery is there to take.</summary>
    public Task WaitToReadAsync(CancellationToken cancellationToken) => _queue.Reader.WaitToReadAsync(cancellationToken).AsTask();
}
