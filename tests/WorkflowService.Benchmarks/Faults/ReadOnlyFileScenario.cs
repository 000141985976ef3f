using System.Diagnostics;
using System.Globalization;

namespace WorkflowService.Benchmarks.Faults;

/// <summary>
/// Fault 11, its second half: the embedded store's filesystem turns read-only under load, as a real one does after an
/// error (ext4 with errors=remount-ro, the error raised through sysfs): the service holds the database file open for
/// writing and every write now fails. Writes are answered 503 with Retry-After, the log says why, reads keep working.
/// The operator then repairs it (stop the node, unmount, e2fsck, mount) and starts the node again: it serves writes, and
/// nothing it acknowledged before the filesystem failed is lost.
/// </summary>
internal sealed class ReadOnlyFileScenario : FaultScenario
{
    private static readonly TimeSpan RecoverWithin = TimeSpan.FromSeconds(15);

    public override bool TurnsItsDiskReadOnly => true;

    public override string? NotApplicable(string backend) => backend == "postgres"
        ? "the database server's files are the server's to manage: to the service it is a database that refuses writes or stops answering, which is fault 2"
        : null;

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var disk = context.ReadOnlyDisk ?? throw new InvalidOperationException("the read-only fault needs a filesystem of its own");
        var readOnlyFor = TimeSpan.FromSeconds(context.Short ? 10 : 30);
        await using var nodes = context.CreateNodes();
        await nodes.StartAsync(1, ct);
        await context.PublishAsync(nodes, TwoSignalLoad.DefinitionFile);
        var node = nodes.All[0];

        using var running = new LoadUnderFault(context, nodes, "readonly", concurrency: 8);
        var known = await running.Client.StartAsync(TwoSignalLoad.Definition, null, "readonly-known", ct);
        using var probe = new OutageProbe(context.ApiKey.Key, read: known);
        using var stopProbing = CancellationTokenSource.CreateLinkedTokenSource(ct);
        TimeSpan loadTime;
        long began, ended, restarted;
        bool turned;
        string log;
        Task probing;
        var repair = Stopwatch.StartNew();
        try
        {
            await Task.Delay(TimeSpan.FromSeconds(3), ct);
            probing = probe.RunAsync(nodes, stopProbing.Token);
            began = Stopwatch.GetTimestamp();
            disk.TurnReadOnly();
            turned = disk.IsReadOnly;
            await Task.Delay(readOnlyFor, ct);
            ended = Stopwatch.GetTimestamp();
            log = await File.ReadAllTextAsync(node.Process!.LogPath, ct);

            // The operator's repair: the node lets go of the filesystem, which is checked and mounted again.
            repair.Restart();
            await node.StopAsync();
            await disk.RepairAsync(ct);
            await nodes.StartAsync(node, ct);
            repair.Stop();
            restarted = Stopwatch.GetTimestamp();
            await probe.WaitForStartServedAsync(restarted, RecoverWithin + TimeSpan.FromSeconds(1), ct);
        }
        finally
        {
            loadTime = await running.StopAsync();
            await stopProbing.CancelAsync();
        }

        await probing;
        var load = running.Load;
        var mustComplete = load.MustComplete;
        var drained = await Drain.UntilCompletedAsync(context.Backend, mustComplete.Count, restarted, TimeSpan.FromMinutes(1), ct);
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

        if (!turned)
        {
            outcome.Failures.Add("the filesystem did not turn read-only (the kernel did not remount it): the row tested nothing");
        }

        // SQLite's own words for a write refused by a read-only file or filesystem.
        probe.CheckWritesRefusedReadsServed(outcome, began, ended, "read-only", log, "readonly", "read-only");
        var served = probe.FirstStartServedSince(restarted);
        // Recovery: from the node's start on the repaired filesystem to the first start served.
        outcome.Recovery = served is { } first ? Stopwatch.GetElapsedTime(restarted, first) : null;
        if (outcome.Recovery is not { } took || took > RecoverWithin)
        {
            outcome.Failures.Add($"read-only: starts did not succeed within {RecoverWithin.TotalSeconds:0} s of the node's start on the repaired filesystem");
        }

        if (drained is null)
        {
            outcome.Failures.Add("the load's workflows did not all complete once the filesystem was repaired");
        }

        outcome.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"the store's 64 MiB ext4 filesystem (loop device, errors=remount-ro) turned read-only by an ext4 error under load for {readOnlyFor.TotalSeconds:0} s; 1 node; load: 8 workers of start, 'a', 0-50 ms, 'b'; probes every 0.5 s: {probe.DescribeWritesAndReads(began, ended)}; repair (stop the node, unmount, e2fsck, mount, start) took {repair.Elapsed.TotalSeconds:0.0} s; starts succeeded {(served is { } s ? $"{Stopwatch.GetElapsedTime(restarted, s).TotalSeconds:0.0} s" : "never")} after the node started again"));
        FaultChecks.AddLoadFailures(outcome, load);
        return outcome;
    }
}
