using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>The fault table's rows, in the order; the rows not built yet are listed in docs/reliability.md as such.</summary>
internal static class FaultCatalog
{
    public static IReadOnlyList<FaultScenario> All { get; } =
    [
        new NodeKillScenario { Number = 1, Name = "node-kill", Title = "SIGKILL a random node every few seconds under load, then rolling restarts" },
        new DatabaseOutageScenario { Number = 2, Name = "database-outage", Title = "the database stopped under load and started again, then paused longer than the command timeout" },
        new PartitionScenario { Number = 3, Name = "partition", Title = "one node's database traffic blackholed by a loopback TCP proxy for three leases, then healed" },
        new PausedNodeScenario { Number = 4, Name = "paused-node", Title = "SIGSTOP a node holding claims for twice the lease, then SIGCONT" },
        new SlowHandlerScenario { Number = 4, Name = "slow-handler", Title = "each workflow's http call-out answered after twice the lease (a handler slower than the lease)" },
        new AmbiguousCommitScenario { Number = 5, Name = "ambiguous-commits", Title = "5 % of the store's writes (create, commit, queue, claim, give back, dead-letter) and half its replays fail: at once, after a timeout, or after they committed" },
        new DuplicateScenario { Number = 6, Name = "duplicates", Title = "every start and signal sent three times at once with one key; dead letters replayed by two concurrent calls" },
        new EarlySignalScenario { Number = 7, Name = "early-signals", Title = "start-then-signal pairs with 0-50 ms between the two signals" },
        new MassOperationScenario { Number = 8, Name = "mass-operations", Title = "every waiting instance suspended, signalled, then resumed in one burst by 256 callers fed page by page from the list; poison signals among them" },
        new ClockSkewScenario { Number = 9, Name = "clock-skew", Title = "one node's clock five minutes ahead and one five minutes behind, under timers and delayed signals" },
        new ResourceAbuseScenario { Number = 10, Name = "resource-abuse", Title = "poison signals, runaway expressions (loops, allocation) and 1,000 concurrent long-polls beside a normal load" },
        new DiskFullScenario { Number = 11, Name = "disk-full", Title = "the embedded store's disk full under load, then space returns" },
        new ReadOnlyFileScenario { Number = 11, Name = "read-only-file", Title = "the embedded store's filesystem turned read-only under load (an ext4 error), then repaired and the node started again" },
        new EventsScenario { Number = 12, Name = "events-receiver-down", Fault = EventFault.ReceiverDown, Title = "events out: the webhook receiver down (connections refused) for a minute under load, then back" },
        new EventsScenario { Number = 12, Name = "events-dispatcher-kill", Fault = EventFault.DispatcherKill, Title = "events out: a node SIGKILLed while it holds delivery leases, its requests at a slow receiver under way" },
        new EventsScenario { Number = 12, Name = "events-database-stop", Fault = EventFault.DatabaseStop, Title = "events out: the database stopped under load, then started again" },
        new FailoverScenario { Number = 13, Name = "failover", Fault = FailoverFault.PrimaryKilled, Title = "the PostgreSQL primary's machine dies under load (keeper and postmaster SIGKILLed); pg_auto_failover promotes the synchronous standby" },
        new FailoverScenario { Number = 13, Name = "switchover", Fault = FailoverFault.Switchover, Title = "a planned pg_auto_failover switchover under load: the standby promoted, the primary follows it" },
        new FailoverScenario { Number = 13, Name = "failover-async", Fault = FailoverFault.PrimaryKilled, Replication = AutoFailoverReplication.Asynchronous, Title = "the primary's machine dies under load with asynchronous replication (the standby out of the write quorum); what was lost is reported" },
        new ScheduleFaultScenario { Number = 14, Name = "schedules", Title = "schedules firing every second on three nodes under load: nodes SIGKILLed, one paused for twice the lease, one's clock five minutes ahead" },
    ];

    /// <summary>The backends a fault can run on (faults --backend), in the table's order.</summary>
    public static IReadOnlyList<string> Backends { get; } = ["sqlite", "postgres", "mongodb"];

    /// <summary>What faults --backend all runs: the backends whose servers this machine starts or is given by default.</summary>
    public static IReadOnlyList<string> AllMeans { get; } = ["sqlite", "postgres"];

    /// <summary>The faults this table has no row for yet, by number, with what each needs.</summary>
    public static IReadOnlyList<(int Number, string Title)> NotBuilt { get; } =
    [
    ];
}
