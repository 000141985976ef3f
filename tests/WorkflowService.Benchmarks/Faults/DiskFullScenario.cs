using System.Diagnostics;
using System.Globalization;

namespace WorkflowService.Benchmarks.Faults;

/// <summary>
/// Fault 11: the embedded store's disk fills up under load (its file on a small filesystem of the runner's own, filled
/// to the last byte), then space returns. Writes are answered 503 with Retry-After (never 500, never hanging), the log
/// says why, reads keep working, and the node serves writes again once there is space, with nothing acknowledged lost.
/// </summary>
internal sealed class DiskFullScenario : FaultScenario
{
    private static readonly TimeSpan RecoverWithin = TimeSpan.FromSeconds(15);

    public override bool FillsItsDisk => true;

    public override string? NotApplicable(string backend) => backend == "postgres"
        ? "the database server's disk is the server's to manage: to the service it is a database that stops answering, which is fault 2"
        : null;

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var disk = context.Disk ?? throw new InvalidOperationException("the disk-full fault needs a small disk of its own");
        var full = TimeSpan.FromSeconds(context.Short ? 10 : 30);
        await using var nodes = context.CreateNodes();
        await nodes.StartAsync(1, ct);
        await context.PublishAsync(nodes, TwoSignalLoad.DefinitionFile);

        using var running = new LoadUnderFault(context, nodes, "disk", concurrency: 8);
        var known = await running.Client.StartAsync(TwoSignalLoad.Definition, null, "disk-known", ct);
        using var probe = new OutageProbe(context.ApiKey.Key, read: known);
        using var stopProbing = CancellationTokenSource.CreateLinkedTokenSource(ct);
        TimeSpan loadTime;
        long began, ended;
        long filled;
        Task probing;
        try
        {
            await Task.Delay(TimeSpan.FromSeconds(3), ct);
            probing = probe.RunAsync(nodes, stopProbing.Token);
            began = Stopwatch.GetTimestamp();
            filled = disk.Fill();
            await Task.Delay(full, ct);
            disk.Free();
            ended = Stopwatch.GetTimestamp();
            await probe.WaitForStartServedAsync(ended, RecoverWithin + TimeSpan.FromSeconds(1), ct);
        }
        finally
        {
            loadTime = await running.StopAsync();
            await stopProbing.CancelAsync();
        }

        await probing;
        var load = running.Load;
        var mustComplete = load.MustComplete;
        var drained = await Drain.UntilCompletedAsync(context.Backend, mustComplete.Count, ended, TimeSpan.FromMinutes(1), ct);
        var log = nodes.All[0].Process is { } process ? await File.ReadAllTextAsync(process.LogPath, ct) : string.Empty;
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

        probe.CheckWritesRefusedReadsServed(outcome, began, ended, "disk full", log, "disk is full");
        var recovered = probe.FirstStartServedSince(ended);
        // Recovery: from space returning to the first start served.
        outcome.Recovery = recovered is { } served ? Stopwatch.GetElapsedTime(ended, served) : null;
        if (outcome.Recovery is not { } took || took > RecoverWithin)
        {
            outcome.Failures.Add($"disk full: starts did not succeed again within {RecoverWithin.TotalSeconds:0} s of space returning");
        }

        if (drained is null)
        {
            outcome.Failures.Add("the load's workflows did not all complete once space returned");
        }

        outcome.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"the store's 64 MiB filesystem filled to the last byte ({filled / 1024.0 / 1024.0:0.0} MiB of filler) for {full.TotalSeconds:0} s, then freed; 1 node; load: 8 workers of start, 'a', 0-50 ms, 'b'; probes every 0.5 s: {probe.DescribeWritesAndReads(began, ended)}; starts succeeded again {(recovered is { } r ? $"{Stopwatch.GetElapsedTime(ended, r).TotalSeconds:0.0} s" : "never")} after space returned"));
        FaultChecks.AddLoadFailures(outcome, load);
        return outcome;
    }
}
