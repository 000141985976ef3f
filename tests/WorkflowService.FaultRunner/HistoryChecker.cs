using WorkflowService.RunnerBackends;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Holds what the store holds after a fault run to what the service acknowledged (the <see cref="Ledger"/>):
/// (a) no acknowledged start or signal lost, (b) none applied twice, (c) each instance's history contiguous and in time
/// order and its version no more than its commits allow, (d) nothing applied after an instance ended, (e) no instance
/// left waiting on something nothing will deliver, (f) the run did the expected work. Pure: no I/O, unit-tested on
/// hand-made histories.
/// </summary>
internal static class HistoryChecker
{
    public const int MaxSamples = 12;

    private static readonly HashSet<string> TerminalStatuses = ["Completed", "Failed", "Cancelled"];
    private static readonly HashSet<string> TerminalEvents = ["InstanceCompleted", "InstanceFailed", "InstanceCancelled"];
    private static readonly HashSet<string> UnsettledSignals = ["Pending", "Parked"];

    public static CheckerVerdict Check(IReadOnlyList<LedgerEntry> acknowledged, StoreSnapshot store, CheckerExpectation expected)
    {
        var findings = new Findings();
        var instances = store.Instances.ToDictionary(i => i.Id);
        var signals = store.Signals.ToDictionary(s => s.Id);
        var history = store.History.ToLookup(e => e.InstanceId);
        var received = store.History.Where(e => e.Type == "SignalReceived" && e.SignalId is not null).ToLookup(e => e.SignalId!.Value);
        var replayed = store.History.Where(e => e.Type == "InstanceReplayed" && e.SignalId is not null).ToLookup(e => e.SignalId!.Value);

        CheckStarts(acknowledged, store, instances, findings);
        CheckSignals(acknowledged, store, instances, signals, received, findings);
        CheckReplays(acknowledged, replayed, findings);
        CheckStateChanges(acknowledged, history, findings);

        foreach (var instance in store.Instances)
        {
            CheckHistory(instance, history[instance.Id].OrderBy(e => e.Sequence).ToList(), expected, findings);
        }

        foreach (var signal in store.Signals.Where(s => UnsettledSignals.Contains(s.Status)))
        {
            // (d) A signal still queued for an instance that has ended would be applied after its end, or never.
            if (instances.TryGetValue(signal.InstanceId, out var owner) && TerminalStatuses.Contains(owner.Status))
            {
                findings.Violation($"signal {signal.Id} ('{signal.Name}') is still {signal.Status} although instance {owner.Id} is {owner.Status}");
            }
        }

        var completed = 0;
        foreach (var id in expected.MustComplete)
        {
            if (!instances.TryGetValue(id, out var instance))
            {
                continue; // counted as a lost start above
            }

            if (instance.Status == "Completed")
            {
                completed++;
            }
            else if (!(instance.Status == "Faulted" && expected.MayStayFaulted.Contains(id)))
            {
                findings.Stuck($"instance {id} is {instance.Status}{(instance.WaitKind is { } kind ? $" at a {kind} wait" : string.Empty)} although every signal it waits for was acknowledged");
            }
        }

        // (e) Whatever else waits must wait on something queued: a timer or a call-out without its pending signal never ends.
        foreach (var instance in store.Instances.Where(i => !expected.MustComplete.Contains(i.Id)))
        {
            if (instance.Status == "Running")
            {
                findings.Stuck($"instance {instance.Id} is Running with no run under way");
            }
            else if (instance.Status == "Waiting" && instance.WaitKind is "Timer" or "CallOut" or "SubWorkflow"
                     && (instance.WaitSignalId is not { } wait || !signals.TryGetValue(wait, out var due) || due.Status != "Pending"))
            {
                findings.Stuck($"instance {instance.Id} waits on a {instance.WaitKind} whose signal is not pending");
            }
        }

        return new CheckerVerdict
        {
            Acknowledged = acknowledged.Count,
            Lost = findings.LostCount,
            Duplicated = findings.DuplicatedCount,
            Stuck = findings.StuckCount,
            Completed = completed,
            ExpectedCompleted = expected.MustComplete.Count,
            Violations = findings.ViolationCount,
            Samples = findings.Samples,
        };
    }

    private static void CheckStarts(IReadOnlyList<LedgerEntry> acknowledged, StoreSnapshot store, Dictionary<Guid, StoredInstance> instances, Findings findings)
    {
        var byKey = store.Instances.Where(i => i.IdempotencyKey is not null).ToLookup(i => i.IdempotencyKey!);
        foreach (var start in acknowledged.Where(e => e.Kind == LedgerKind.Start).GroupBy(e => e.ClientId))
        {
            var answered = start.Select(e => e.InstanceId).Distinct().ToList();
            if (answered.Count > 1)
            {
                findings.Duplicated($"start {start.Key} was answered with {answered.Count} different instances");
            }

            foreach (var id in answered.Where(id => !instances.ContainsKey(id)))
            {
                findings.Lost($"start {start.Key}: acknowledged instance {id} is not in the store");
            }

            if (byKey[start.Key].Count() > 1)
            {
                findings.Duplicated($"start {start.Key}: {byKey[start.Key].Count()} instances carry its idempotency key");
            }
        }
    }

    private static void CheckSignals(IReadOnlyList<LedgerEntry> acknowledged, StoreSnapshot store, Dictionary<Guid, StoredInstance> instances,
        Dictionary<Guid, StoredSignal> signals, ILookup<Guid, StoredEvent> received, Findings findings)
    {
        var byKey = store.Signals.Where(s => s.IdempotencyKey is not null).ToLookup(s => (s.InstanceId, s.IdempotencyKey!));
        foreach (var sent in acknowledged.Where(e => e.Kind == LedgerKind.Signal).GroupBy(e => (e.InstanceId, e.ClientId)))
        {
            var answered = sent.Select(e => e.ServerId).Distinct().ToList();
            if (answered.Count > 1 || byKey[sent.Key].Count() > 1)
            {
                findings.Duplicated($"signal {sent.Key.ClientId} of instance {sent.Key.InstanceId} was queued {Math.Max(answered.Count, byKey[sent.Key].Count())} times");
            }

            foreach (var id in answered)
            {
                if (!signals.TryGetValue(id, out var signal))
                {
                    findings.Lost($"signal {sent.Key.ClientId}: acknowledged signal {id} is not in the store");
                    continue;
                }

                var applied = received[id].Count();
                if (applied > 1)
                {
                    findings.Duplicated($"signal {id} ('{signal.Name}') was received {applied} times by instance {signal.InstanceId}");
                }
                else if (signal.Status == "Handled" && applied == 0)
                {
                    findings.Lost($"signal {id} ('{signal.Name}') is Handled but instance {signal.InstanceId} never received it");
                }
                else if (UnsettledSignals.Contains(signal.Status) && instances.TryGetValue(signal.InstanceId, out var owner) && TerminalStatuses.Contains(owner.Status))
                {
                    findings.Lost($"signal {id} ('{signal.Name}') was never applied: instance {owner.Id} ended {owner.Status} with it {signal.Status}");
                }
            }
        }
    }

    private static void CheckReplays(IReadOnlyList<LedgerEntry> acknowledged, ILookup<Guid, StoredEvent> replayed, Findings findings)
    {
        foreach (var replay in acknowledged.Where(e => e.Kind == LedgerKind.Replay).GroupBy(e => e.ServerId))
        {
            var recorded = replayed[replay.Key].Count();
            if (recorded < replay.Count())
            {
                findings.Lost($"dead letter {replay.Key}: {replay.Count()} replays acknowledged, {recorded} recorded");
            }
            else if (recorded > replay.Count())
            {
                findings.Duplicated($"dead letter {replay.Key}: {replay.Count()} replays acknowledged, {recorded} recorded");
            }
        }
    }

    /// <summary>
    /// (a) for operators' state changes: every acknowledged suspend and resume is in its instance's history. (A retried one
    /// whose first attempt took effect is told 409 and is not acknowledged, so more recorded than acknowledged is no fault:
    /// an instance can only be suspended from waiting and resumed from suspended.)
    /// </summary>
    private static void CheckStateChanges(IReadOnlyList<LedgerEntry> acknowledged, ILookup<Guid, StoredEvent> history, Findings findings)
    {
        foreach (var change in acknowledged.Where(e => e.Kind is LedgerKind.Suspend or LedgerKind.Resume).GroupBy(e => (e.Kind, e.InstanceId)))
        {
            var type = change.Key.Kind == LedgerKind.Suspend ? "InstanceSuspended" : "InstanceResumed";
            var recorded = history[change.Key.InstanceId].Count(e => e.Type == type);
            if (recorded < change.Count())
            {
                findings.Lost($"instance {change.Key.InstanceId}: {change.Count()} {change.Key.Kind.ToString().ToLowerInvariant()}s acknowledged, {recorded} recorded");
            }
        }
    }

    private static void CheckHistory(StoredInstance instance, List<StoredEvent> events, CheckerExpectation expected, Findings findings)
    {
        // (c) Sequences 0..n-1, no gap and no repeat, in time order; the version counts commits, and each commit appends.
        for (var i = 0; i < events.Count; i++)
        {
            if (events[i].Sequence != i)
            {
                findings.Violation($"instance {instance.Id}: history sequence {events[i].Sequence} where {i} was due");
                return;
            }

            if (i > 0 && events[i].At < events[i - 1].At)
            {
                findings.Violation($"instance {instance.Id}: history event {i} is dated before event {i - 1}");
                return;
            }
        }

        if (events.Count != instance.HistoryLength)
        {
            findings.Violation($"instance {instance.Id}: {events.Count} history events, its row says {instance.HistoryLength}");
        }

        if (instance.Version < 1 || instance.Version > Math.Max(1, events.Count))
        {
            findings.Violation($"instance {instance.Id}: version {instance.Version} with {events.Count} history events");
        }
        else if (instance.Status == "Completed" && expected.CompletedVersions is { } versions && !versions.Contains(instance.Version))
        {
            findings.Duplicated($"instance {instance.Id}: completed at version {instance.Version}, expected one of {string.Join(", ", versions.Order())}: a commit too many");
        }

        // (d) Nothing after the end: one terminal event, the last one.
        var ends = events.Count(e => TerminalEvents.Contains(e.Type));
        if (TerminalStatuses.Contains(instance.Status) && (ends != 1 || !TerminalEvents.Contains(events[^1].Type)))
        {
            findings.Violation($"instance {instance.Id} is {instance.Status} with {ends} end events, the last event {(events.Count > 0 ? events[^1].Type : "none")}");
        }
        else if (!TerminalStatuses.Contains(instance.Status) && ends > 0)
        {
            findings.Violation($"instance {instance.Id} is {instance.Status} after an end event");
        }
    }

    private sealed class Findings
    {
        private readonly List<string> _samples = [];

        public int LostCount { get; private set; }
        public int DuplicatedCount { get; private set; }
        public int StuckCount { get; private set; }
        public int ViolationCount { get; private set; }
        public IReadOnlyList<string> Samples => _samples;

        public void Lost(string what)
        {
            LostCount++;
            Sample("lost: " + what);
        }

        public void Duplicated(string what)
        {
            DuplicatedCount++;
            Sample("duplicated: " + what);
        }

        public void Stuck(string what)
        {
            StuckCount++;
            Sample("stuck: " + what);
        }

        public void Violation(string what)
        {
            ViolationCount++;
            Sample("invariant: " + what);
        }

        private void Sample(string what)
        {
            if (_samples.Count < MaxSamples)
            {
                _samples.Add(what);
            }
        }
    }
}
