using System.Diagnostics;
using System.Globalization;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Checks what a <see cref="WebhookReceiver"/> got against the store, read directly: the events expected are those of the
/// history the store holds (a commit that happened), each to arrive at least once, signed, in commit order per instance;
/// none may arrive for an event the history does not hold; a duplicate (a delivery id received again) needs a retried
/// attempt, so duplicates are bounded by the retries the outbox recorded.
/// </summary>
internal sealed class EventLedgerCheck
{
    private const int Samples = 5;

    /// <summary>The history event types the load's definition produces, and the event each becomes.</summary>
    private static readonly Dictionary<string, string> Published = new Dictionary<string, string>
    {
        ["InstanceStarted"] = "instance.started",
        ["InstanceCompleted"] = "instance.completed",
        ["InstanceFailed"] = "instance.failed",
        ["InstanceFaulted"] = "instance.faulted",
    };

    private static readonly TimeSpan ReadEvery = TimeSpan.FromMilliseconds(500);

    public List<string> Failures { get; } = [];

    public int Expected { get; private set; }

    public int Received { get; private set; }

    public int Duplicates { get; private set; }

    public int RetriedAttempts { get; private set; }

    public int MaxAttempts { get; private set; }

    /// <summary>When every expected event had arrived (a stopwatch timestamp); null when some never did.</summary>
    public long? DeliveredAt { get; private set; }

    /// <summary>Waits (at most <paramref name="deadline"/>) until every expected event arrived, then checks.</summary>
    public static async Task<EventLedgerCheck> UntilDeliveredAsync(StoreSnapshotReader store, WebhookReceiver receiver, IReadOnlySet<Guid> leftOut,
        TimeSpan deadline, CancellationToken cancellationToken)
    {
        var waited = Stopwatch.StartNew();
        while (true)
        {
            var expected = await ExpectedAsync(store, leftOut, cancellationToken);
            var heard = receiver.Receipts.Select(r => (r.InstanceId, r.Type)).ToHashSet();
            var missing = expected.Count(e => !heard.Contains((e.InstanceId, e.Type)));
            if (missing == 0 || waited.Elapsed > deadline)
            {
                var check = new EventLedgerCheck { DeliveredAt = missing == 0 ? Stopwatch.GetTimestamp() : null };
                await check.CheckAsync(store, receiver, expected, leftOut, cancellationToken);
                return check;
            }

            await Task.Delay(ReadEvery, cancellationToken);
        }
    }

    /// <summary>The row's note; <paramref name="faultEnded"/> is a stopwatch timestamp.</summary>
    public string Summary(long faultEnded)
    {
        var arrived = DeliveredAt is { } at
            ? string.Create(CultureInfo.InvariantCulture, $"the last arrived within {Stopwatch.GetElapsedTime(faultEnded, at).TotalSeconds:0.0} s of the fault's end")
            : "not all delivered";
        return string.Create(CultureInfo.InvariantCulture,
            $"events: {Expected:N0} expected from the history, {Received:N0} requests received, {Duplicates} duplicates against {RetriedAttempts:N0} retried attempts (at most {MaxAttempts} attempts for one delivery); {arrived}");
    }

    private static async Task<List<(Guid InstanceId, string Type, int Sequence)>> ExpectedAsync(StoreSnapshotReader store, IReadOnlySet<Guid> leftOut,
        CancellationToken cancellationToken)
    {
        var snapshot = await store.ReadAsync(cancellationToken);
        return [.. snapshot.History
            .Where(e => !leftOut.Contains(e.InstanceId) && Published.ContainsKey(e.Type))
            .Select(e => (e.InstanceId, Published[e.Type], e.Sequence))];
    }

    private async Task CheckAsync(StoreSnapshotReader store, WebhookReceiver receiver, List<(Guid InstanceId, string Type, int Sequence)> expected,
        IReadOnlySet<Guid> leftOut, CancellationToken cancellationToken)
    {
        var receipts = receiver.Receipts.Where(r => !leftOut.Contains(r.InstanceId)).ToList();
        Expected = expected.Count;
        Received = receipts.Count;
        var first = receipts.GroupBy(r => (r.InstanceId, r.Type)).ToDictionary(g => g.Key, g => g.Min(r => r.Order));

        var missing = expected.Where(e => !first.ContainsKey((e.InstanceId, e.Type))).ToList();
        Add(missing.Select(e => $"{e.Type} of {e.InstanceId}"), "events of commits that happened never arrived");

        var known = expected.Select(e => (e.InstanceId, e.Type)).ToHashSet();
        Add(first.Keys.Where(k => !known.Contains(k)).Select(k => $"{k.Type} of {k.InstanceId}"), "events arrived for no commit the store holds");

        // Commit order per instance: each event's first arrival after the first arrival of the one committed before it.
        var outOfOrder = expected.GroupBy(e => e.InstanceId)
            .SelectMany(g => g.OrderBy(e => e.Sequence).Zip(g.OrderBy(e => e.Sequence).Skip(1)))
            .Where(p => first.TryGetValue((p.First.InstanceId, p.First.Type), out var earlier)
                && first.TryGetValue((p.Second.InstanceId, p.Second.Type), out var later) && later < earlier)
            .Select(p => $"{p.Second.Type} of {p.Second.InstanceId} arrived before {p.First.Type}");
        Add(outOfOrder, "events arrived out of commit order");

        Add(receipts.Where(r => r.Signed != true).Select(r => $"{r.Id} ({r.Type})"), "requests carried no signature that verifies with the subscription's secret");

        var deliveries = (await store.ReadDeliveriesAsync(cancellationToken)).Where(d => !leftOut.Contains(d.InstanceId)).ToList();
        Add(deliveries.Where(d => d.Status != "Delivered").Select(d => $"{d.Id} {d.Type} {d.Status} after {d.Attempts} attempts"),
            "deliveries were not marked delivered");
        RetriedAttempts = deliveries.Sum(d => Math.Max(0, d.Attempts - 1));
        MaxAttempts = deliveries.Count == 0 ? 0 : deliveries.Max(d => d.Attempts);
        Duplicates = receipts.Count - receipts.Select(r => r.Id).Distinct().Count();
        if (Duplicates > RetriedAttempts)
        {
            Failures.Add($"{Duplicates} duplicate requests, more than the {RetriedAttempts} retried attempts: a delivery was sent twice without a retry");
        }
    }

    private void Add(IEnumerable<string> problems, string what)
    {
        var all = problems.ToList();
        if (all.Count > 0)
        {
            Failures.Add($"{all.Count} {what}, e.g. {string.Join("; ", all.Take(Samples))}");
        }
    }
}
