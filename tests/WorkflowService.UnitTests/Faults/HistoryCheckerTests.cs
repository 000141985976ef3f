using WorkflowService.FaultRunner;
using WorkflowService.RunnerBackends;

namespace WorkflowService.UnitTests.Faults;

/// <summary>
/// The fault runner's history checker on hand-made histories: a clean run passes, and each way a store can break the
/// load's ledger (lost, applied twice, gaps, work after the end, stuck, no work) is caught and counted once.
/// </summary>
public sealed class HistoryCheckerTests
{
    [Fact]
    public void A_run_where_every_acknowledged_signal_was_applied_once_passes()
    {
        var run = new TwoWaitsRun(instances: 3);

        var verdict = run.Check();

        Assert.True(verdict.Passed, string.Join("; ", verdict.Samples));
        Assert.Equal(9, verdict.Acknowledged);
        Assert.Equal(3, verdict.Completed);
    }

    [Fact]
    public void An_acknowledged_signal_missing_from_the_store_is_lost()
    {
        var run = new TwoWaitsRun(instances: 2);
        run.Signals.RemoveAll(s => s.Id == run.SignalB(1));

        var verdict = run.Check();

        Assert.Equal(1, verdict.Lost);
        Assert.False(verdict.Passed);
        Assert.Contains(verdict.Samples, s => s.StartsWith("lost:", StringComparison.Ordinal) && s.Contains(run.SignalB(1).ToString(), StringComparison.Ordinal));
    }

    [Fact]
    public void A_handled_signal_its_instance_never_received_is_lost()
    {
        var run = new TwoWaitsRun(instances: 1);
        run.History.RemoveAll(e => e.SignalId == run.SignalA(0));
        run.Renumber(run.Instance(0));

        var verdict = run.Check();

        Assert.Equal(1, verdict.Lost);
    }

    [Fact]
    public void A_signal_still_pending_on_an_ended_instance_is_lost_and_breaks_the_end()
    {
        var run = new TwoWaitsRun(instances: 1);
        run.SetSignalStatus(run.SignalB(0), "Pending");

        var verdict = run.Check();

        Assert.Equal(1, verdict.Lost);
        Assert.Equal(1, verdict.Violations);
    }

    [Fact]
    public void A_lost_signal_and_the_instance_it_leaves_waiting_are_loss_only()
    {
        // What asynchronous replication loses in a failover: the row reports it rather than fail on it.
        var run = new TwoWaitsRun(instances: 2);
        run.Signals.RemoveAll(s => s.Id == run.SignalB(1));

        var verdict = run.Check();

        Assert.True(verdict.LostOnly);
        Assert.False(verdict.Passed);
    }

    [Fact]
    public void A_loss_beside_a_signal_received_twice_is_not_loss_only()
    {
        var run = new TwoWaitsRun(instances: 2);
        run.Signals.RemoveAll(s => s.Id == run.SignalB(1));
        var id = run.Instance(0);
        run.History.Insert(run.History.FindIndex(e => e.InstanceId == id && e.Type == "InstanceCompleted"),
            new StoredEvent(id, 0, TwoWaitsRun.T0, "SignalReceived", run.SignalB(0)));
        run.Renumber(id);

        var verdict = run.Check();

        Assert.Equal(1, verdict.Lost);
        Assert.False(verdict.LostOnly);
    }

    [Fact]
    public void A_run_that_lost_nothing_is_not_loss_only()
    {
        var verdict = new TwoWaitsRun(instances: 2).Check();

        Assert.False(verdict.LostOnly);
        Assert.True(verdict.Passed);
    }

    [Fact]
    public void A_signal_received_twice_is_a_duplicate()
    {
        var run = new TwoWaitsRun(instances: 2);
        var id = run.Instance(0);
        run.History.Insert(run.History.FindIndex(e => e.InstanceId == id && e.Type == "InstanceCompleted"),
            new StoredEvent(id, 0, TwoWaitsRun.T0, "SignalReceived", run.SignalB(0)));
        run.Renumber(id);

        var verdict = run.Check();

        Assert.Equal(1, verdict.Duplicated);
        Assert.False(verdict.Passed);
    }

    [Fact]
    public void Two_instances_for_one_start_key_are_a_duplicate()
    {
        var run = new TwoWaitsRun(instances: 1);
        run.Instances.Add(run.Instances[0] with { Id = Guid.NewGuid(), Status = "Waiting", WaitKind = "Signal", WaitSignal = "a", Version = 1, HistoryLength = 0 });

        var verdict = run.Check();

        Assert.Equal(1, verdict.Duplicated);
    }

    [Fact]
    public void One_start_key_answered_with_two_instances_is_a_duplicate()
    {
        var run = new TwoWaitsRun(instances: 2);
        run.Ledger.Add(run.Ledger[0] with { InstanceId = run.Instance(1) });

        var verdict = run.Check();

        Assert.Equal(1, verdict.Duplicated);
    }

    [Fact]
    public void One_signal_key_queued_twice_is_a_duplicate()
    {
        var run = new TwoWaitsRun(instances: 1);
        var a = run.Signals.Single(s => s.Id == run.SignalA(0));
        run.Signals.Add(a with { Id = Guid.NewGuid(), Status = "Unmatched" });

        var verdict = run.Check();

        Assert.Equal(1, verdict.Duplicated);
    }

    [Fact]
    public void A_completed_instance_at_a_version_its_commits_do_not_allow_is_a_duplicate_commit()
    {
        var run = new TwoWaitsRun(instances: 1);
        run.Instances[0] = run.Instances[0] with { Version = 4 };

        var verdict = run.Check();

        Assert.Equal(1, verdict.Duplicated);
    }

    [Fact]
    public void A_gap_in_an_instances_history_breaks_an_invariant()
    {
        var run = new TwoWaitsRun(instances: 1);
        var third = run.History.FindIndex(e => e.Sequence == 2);
        run.History[third] = run.History[third] with { Sequence = 7 };

        var verdict = run.Check();

        Assert.Equal(1, verdict.Violations);
    }

    [Fact]
    public void History_out_of_time_order_breaks_an_invariant()
    {
        var run = new TwoWaitsRun(instances: 1);
        run.History[1] = run.History[1] with { At = TwoWaitsRun.T0.AddSeconds(-1) };

        var verdict = run.Check();

        Assert.Equal(1, verdict.Violations);
    }

    [Fact]
    public void An_event_after_the_end_breaks_an_invariant()
    {
        var run = new TwoWaitsRun(instances: 1);
        var id = run.Instance(0);
        run.History.Add(new StoredEvent(id, 6, TwoWaitsRun.T0.AddSeconds(10), "StepCompleted", null));
        run.Instances[0] = run.Instances[0] with { HistoryLength = 7 };

        var verdict = run.Check();

        Assert.Equal(1, verdict.Violations);
    }

    [Fact]
    public void An_instance_that_got_every_signal_but_did_not_complete_is_stuck()
    {
        var run = new TwoWaitsRun(instances: 2);
        run.Instances[1] = run.Instances[1] with { Status = "Waiting", WaitKind = "Signal", WaitSignal = "b", Version = 2, HistoryLength = 4 };
        run.History.RemoveAll(e => e.InstanceId == run.Instance(1) && e.Sequence >= 4);
        run.SetSignalStatus(run.SignalB(1), "Pending");

        var verdict = run.Check();

        Assert.Equal(1, verdict.Stuck);
        Assert.Equal(1, verdict.Completed);
        Assert.False(verdict.Passed);
    }

    [Fact]
    public void A_timer_wait_whose_signal_is_gone_is_stuck()
    {
        var run = new TwoWaitsRun(instances: 1);
        run.Instances.Add(new StoredInstance(Guid.NewGuid(), "Waiting", "Timer", null, Guid.NewGuid(), 1, 1, "other"));
        run.History.Add(new StoredEvent(run.Instances[^1].Id, 0, TwoWaitsRun.T0, "InstanceStarted", null));

        var verdict = run.Check();

        Assert.Equal(1, verdict.Stuck);
    }

    [Fact]
    public void An_instance_faulted_on_purpose_is_not_stuck_but_an_unexpected_fault_is()
    {
        var run = new TwoWaitsRun(instances: 2);
        foreach (var i in new[] { 0, 1 })
        {
            run.Instances[i] = run.Instances[i] with { Status = "Faulted", WaitKind = "Signal", WaitSignal = "b", Version = 3, HistoryLength = 5 };
            run.History.RemoveAll(e => e.InstanceId == run.Instance(i) && e.Sequence >= 4);
            run.History.Add(new StoredEvent(run.Instance(i), 4, TwoWaitsRun.T0.AddSeconds(5), "InstanceFaulted", run.SignalB(i)));
            run.SetSignalStatus(run.SignalB(i), "DeadLettered");
        }

        var verdict = run.Check(mayStayFaulted: new HashSet<Guid> { run.Instance(0) });

        Assert.Equal(1, verdict.Stuck);
        Assert.Contains(verdict.Samples, s => s.Contains(run.Instance(1).ToString(), StringComparison.Ordinal));
    }

    [Fact]
    public void A_replay_acknowledged_once_must_be_recorded_once()
    {
        var run = new TwoWaitsRun(instances: 2);
        foreach (var i in new[] { 0, 1 })
        {
            run.Ledger.Add(new LedgerEntry(LedgerKind.Replay, $"replay-{i}", run.Instance(i), run.SignalA(i), null, DateTimeOffset.UnixEpoch));
        }

        // Instance 0's replay is recorded twice, instance 1's not at all.
        run.History.Add(new StoredEvent(Guid.NewGuid(), 0, TwoWaitsRun.T0, "InstanceReplayed", run.SignalA(0)));
        run.History.Add(new StoredEvent(Guid.NewGuid(), 0, TwoWaitsRun.T0, "InstanceReplayed", run.SignalA(0)));

        var verdict = run.Check();

        Assert.Equal(1, verdict.Duplicated);
        Assert.Equal(1, verdict.Lost);
    }

    [Fact]
    public void An_acknowledged_suspend_or_resume_missing_from_the_history_is_lost()
    {
        var run = new TwoWaitsRun(instances: 2);
        foreach (var i in new[] { 0, 1 })
        {
            run.Ledger.Add(new LedgerEntry(LedgerKind.Suspend, $"suspend-{i}", run.Instance(i), run.Instance(i), null, DateTimeOffset.UnixEpoch));
            run.Ledger.Add(new LedgerEntry(LedgerKind.Resume, $"resume-{i}", run.Instance(i), run.Instance(i), null, DateTimeOffset.UnixEpoch));
        }

        // Both changes of instance 0 are in its history; instance 1 was suspended, and its acknowledged resume is not there.
        foreach (var (instance, types) in new[] { (0, new[] { "InstanceSuspended", "InstanceResumed" }), (1, new[] { "InstanceSuspended" }) })
        {
            foreach (var type in types)
            {
                run.History.Insert(run.History.FindIndex(e => e.InstanceId == run.Instance(instance)) + 1,
                    new StoredEvent(run.Instance(instance), 0, TwoWaitsRun.T0, type, null));
            }

            run.Renumber(run.Instance(instance));
        }

        var verdict = run.Check();

        Assert.Equal(1, verdict.Lost);
        Assert.Contains(verdict.Samples, s => s.Contains($"instance {run.Instance(1)}: 1 resumes acknowledged, 0 recorded", StringComparison.Ordinal));
    }

    [Fact]
    public void A_run_that_did_no_work_does_not_pass()
    {
        var run = new TwoWaitsRun(instances: 0);

        var verdict = run.Check();

        Assert.False(verdict.Passed);
        Assert.Contains("no work done", verdict.Problems);
    }

    /// <summary>
    /// A clean run of the fault workload as the store would hold it: each instance started, got "a" and "b", completed at
    /// version 3 with six history events; the ledger holds its start and both signals. Tests break it one way each.
    /// </summary>
    private sealed class TwoWaitsRun
    {
        public static readonly DateTime T0 = new(2026, 11, 24, 8, 0, 0, DateTimeKind.Utc);

        private readonly List<(Guid Instance, Guid A, Guid B)> _ids = [];

        public TwoWaitsRun(int instances)
        {
            for (var i = 0; i < instances; i++)
            {
                var (id, a, b) = (Guid.NewGuid(), Guid.NewGuid(), Guid.NewGuid());
                _ids.Add((id, a, b));
                Instances.Add(new StoredInstance(id, "Completed", null, null, null, 3, 6, $"start-{i}"));
                Signals.Add(new StoredSignal(a, id, "a", "Handled", $"a-{i}"));
                Signals.Add(new StoredSignal(b, id, "b", "Handled", $"b-{i}"));
                string[] types = ["InstanceStarted", "WaitStarted", "SignalReceived", "WaitStarted", "SignalReceived", "InstanceCompleted"];
                Guid?[] signals = [null, null, a, null, b, null];
                for (var s = 0; s < types.Length; s++)
                {
                    History.Add(new StoredEvent(id, s, T0.AddMilliseconds(s), types[s], signals[s]));
                }

                Ledger.Add(new LedgerEntry(LedgerKind.Start, $"start-{i}", id, id, null, DateTimeOffset.UnixEpoch));
                Ledger.Add(new LedgerEntry(LedgerKind.Signal, $"a-{i}", id, a, "a", DateTimeOffset.UnixEpoch));
                Ledger.Add(new LedgerEntry(LedgerKind.Signal, $"b-{i}", id, b, "b", DateTimeOffset.UnixEpoch));
            }
        }

        public List<StoredInstance> Instances { get; } = [];
        public List<StoredSignal> Signals { get; } = [];
        public List<StoredEvent> History { get; } = [];
        public List<LedgerEntry> Ledger { get; } = [];

        public Guid Instance(int i) => _ids[i].Instance;
        public Guid SignalA(int i) => _ids[i].A;
        public Guid SignalB(int i) => _ids[i].B;

        public void SetSignalStatus(Guid id, string status)
        {
            var i = Signals.FindIndex(s => s.Id == id);
            Signals[i] = Signals[i] with { Status = status };
        }

        /// <summary>Numbers an instance's events 0..n-1 again after a test removed or inserted one, and fixes its row's count.</summary>
        public void Renumber(Guid instance)
        {
            var sequence = 0;
            for (var i = 0; i < History.Count; i++)
            {
                if (History[i].InstanceId == instance)
                {
                    History[i] = History[i] with { Sequence = sequence, At = T0.AddMilliseconds(sequence) };
                    sequence++;
                }
            }

            var row = Instances.FindIndex(r => r.Id == instance);
            Instances[row] = Instances[row] with { HistoryLength = sequence };
        }

        public CheckerVerdict Check(IReadOnlySet<Guid>? mayStayFaulted = null) =>
            HistoryChecker.Check(Ledger, new StoreSnapshot(Instances, Signals, History), new CheckerExpectation
            {
                MustComplete = _ids.Select(x => x.Instance).ToHashSet(),
                CompletedVersions = new HashSet<int> { 3 },
                MayStayFaulted = mayStayFaulted ?? new HashSet<Guid>(),
            });
    }
}
