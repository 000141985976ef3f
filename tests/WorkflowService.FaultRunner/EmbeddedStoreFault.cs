using System.Diagnostics;
using System.Globalization;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 11's two halves, alike but for how the disk breaks and mends: the embedded store's one node under load, the
/// filesystem under its database file failing (full, read-only) and then mended, while a probe asks for starts and reads
/// every half second. Writes must be answered 503 problem details with Retry-After (never 500, never hanging), the log
/// must say why, reads must keep working, the node must serve writes again within <see cref="RecoverWithin"/> of the
/// repair, and nothing acknowledged may be lost.
/// </summary>
internal abstract class EmbeddedStoreFault : FaultScenario
{
    protected static readonly TimeSpan RecoverWithin = TimeSpan.FromSeconds(15);

    public override string? NotApplicable(string backend) => backend == "sqlite" ? null : WhyNotOnServer;

    /// <summary>Why the fault is not a database server's, PostgreSQL's or MongoDB's (its files are the server's).</summary>
    protected abstract string WhyNotOnServer { get; }

    /// <summary>The fault in a few words, for the row's failures ("disk full").</summary>
    protected abstract string Fault { get; }

    /// <summary>What the node's log must say (any of these).</summary>
    protected abstract IReadOnlyList<string> LogSays { get; }

    /// <summary>Breaks the disk under the running node, keeps it broken for <paramref name="duration"/>, and mends it.</summary>
    protected abstract Task<Breakage> BreakAndMendAsync(FaultContext context, ServiceNodes nodes, TimeSpan duration, CancellationToken cancellationToken);

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var duration = TimeSpan.FromSeconds(context.Short ? 10 : 30);
        await using var nodes = context.CreateNodes();
        await nodes.StartAsync(1, ct);
        await context.PublishAsync(nodes, TwoSignalLoad.DefinitionFile);

        using var running = new LoadUnderFault(context, nodes, Name, concurrency: 8);
        var known = await running.Client.StartAsync(TwoSignalLoad.Definition, null, $"{Name}-known", ct);
        using var probe = new OutageProbe(context.ApiKey.Key, read: known);
        using var stopProbing = CancellationTokenSource.CreateLinkedTokenSource(ct);
        TimeSpan loadTime;
        Breakage breakage;
        Task probing;
        try
        {
            await Task.Delay(TimeSpan.FromSeconds(3), ct);
            probing = probe.RunAsync(nodes, stopProbing.Token);
            breakage = await BreakAndMendAsync(context, nodes, duration, ct);
            await probe.WaitForStartServedAsync(breakage.Mended, RecoverWithin + TimeSpan.FromSeconds(1), ct);
        }
        finally
        {
            loadTime = await running.StopAsync();
            await stopProbing.CancelAsync();
        }

        await probing;
        var load = running.Load;
        var mustComplete = load.MustComplete;
        var drained = await Drain.UntilCompletedAsync(context.Backend, mustComplete.Count, breakage.Mended, TimeSpan.FromMinutes(1), ct);
        var outcome = new FaultOutcome
        {
            Ledger = running.Ledger,
            // The known instance waits for signals nobody sends: not expected to complete.
            Expectation = new CheckerExpectation { MustComplete = mustComplete, CompletedVersions = TwoSignalLoad.CompletedVersions },
            LoadTime = loadTime,
            Nodes = 1,
            FaultsInjected = 1,
            RecoveryBound = RecoverWithin,
        };

        outcome.Failures.AddRange(breakage.Failures);
        probe.CheckWritesRefusedReadsServed(outcome, breakage.Broke, breakage.Ended, Fault, breakage.Log, [.. LogSays]);
        // Recovery: from the repair to the first start served.
        var served = probe.FirstStartServedSince(breakage.Mended);
        outcome.Recovery = served is { } first ? Stopwatch.GetElapsedTime(breakage.Mended, first) : null;
        if (outcome.Recovery is not { } took || took > RecoverWithin)
        {
            outcome.Failures.Add($"{Fault}: starts did not succeed within {RecoverWithin.TotalSeconds:0} s of the repair");
        }

        if (drained is null)
        {
            outcome.Failures.Add($"{Fault}: the load's workflows did not all complete after the repair");
        }

        outcome.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"{breakage.What} for {duration.TotalSeconds:0} s; 1 node; load: 8 workers of start, 'a', 0-50 ms, 'b'; probes every 0.5 s: {probe.DescribeWritesAndReads(breakage.Broke, breakage.Ended)}; starts succeeded {(outcome.Recovery is { } r ? $"{r.TotalSeconds:0.0} s" : "never")} after the repair ({breakage.Repair})"));
        FaultChecks.AddLoadFailures(outcome, load);
        return outcome;
    }

    /// <summary>
    /// How the disk broke and mended: when it broke, when the breakage ended (the probe's window), when the node could
    /// serve writes again (recovery is measured from there), the node's log up to the repair, and what was done.
    /// </summary>
    protected sealed record Breakage(long Broke, long Ended, long Mended, string Log, string What, string Repair)
    {
        public List<string> Failures { get; } = [];
    }
}
