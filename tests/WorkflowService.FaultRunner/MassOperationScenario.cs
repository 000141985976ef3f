using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using System.Threading.Channels;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 8: mass operations. Every waiting instance is suspended by an operator's client that pages through
/// GET /instances?status=Waiting (the list's cursor) and hands each page to many concurrent callers, so that the
/// instances leave the list while it is read; signals arrive while they are suspended (parked), poison ones among them;
/// then all are resumed the same way from many clients at once, in one burst. Every acknowledged suspend and resume must
/// be in its instance's history, the two passes must each have found every instance (nothing skipped by paging), the
/// parked signals must be applied after the resume, and the poison ones must end in the dead letters.
/// </summary>
internal sealed class MassOperationScenario : FaultScenario
{
    /// <summary>How many callers suspend and resume at once (the "many clients"): more than the service has connections, so they queue.</summary>
    private const int Callers = 256;

    /// <summary>The operator's page size.</summary>
    private const int PageSize = 100;

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var nodeCount = context.SeveralNodes ? 3 : 1;
        var count = context.Short ? 400 : 2000;
        var poisoned = count / 20;
        await using var nodes = context.CreateNodes(new Dictionary<string, string>
        {
            ["Engine__MaxAttempts"] = "2",
            ["Engine__RetryBackoff"] = "00:00:02",
        });
        await nodes.StartAsync(nodeCount, ct);
        await context.PublishAsync(nodes, TwoSignalLoad.DefinitionFile);
        await context.PublishAsync(nodes, PoisonWorkflows.DefinitionFile);

        var ledger = new Ledger();
        using var client = new FaultClient(nodes, ledger, context.ApiKey.Key, concurrency: Callers);
        var clock = Stopwatch.StartNew();

        // Each instance waits for its first signal; the poison ones fail after theirs.
        var workflows = new ConcurrentBag<Guid>();
        var poison = new ConcurrentBag<Guid>();
        await Parallel.ForEachAsync(Enumerable.Range(0, count + poisoned), new ParallelOptions { MaxDegreeOfParallelism = 16, CancellationToken = ct },
            async (i, token) =>
            {
                if (i < count)
                {
                    workflows.Add(await client.StartAsync(TwoSignalLoad.Definition, new { n = i }, $"mass-start-{i}", token));
                }
                else
                {
                    poison.Add(await client.StartAsync(PoisonWorkflows.Definition, new { i }, $"mass-poison-{i}", token));
                }
            });
        var all = workflows.Concat(poison).ToHashSet();

        var suspended = await PassAsync(client, "status=Waiting", suspend: true, ct);

        // Signals while suspended: parked, to be applied once resumed.
        await Parallel.ForEachAsync(all, new ParallelOptions { MaxDegreeOfParallelism = 16, CancellationToken = ct }, async (id, token) =>
            await client.SignalAsync(id, poison.Contains(id) ? "go" : "a", null, $"mass-first-{id}", token));

        var resumed = await PassAsync(client, "status=Suspended", suspend: false, ct);

        // The second signal, then every workflow completes and every poison signal ends in the dead letters.
        await Parallel.ForEachAsync(workflows, new ParallelOptions { MaxDegreeOfParallelism = 16, CancellationToken = ct }, async (id, token) =>
            await client.SignalAsync(id, "b", null, $"mass-b-{id}", token));
        var loadTime = clock.Elapsed;

        var outcome = new FaultOutcome
        {
            Ledger = ledger,
            Expectation = new CheckerExpectation
            {
                MustComplete = workflows.ToHashSet(),
                // Started, suspended, "a" parked (or not yet claimed when the resume came), resumed, "a" and "b" applied.
                CompletedVersions = new HashSet<int> { 5, 6 },
                MayStayFaulted = poison.ToHashSet(),
            },
            LoadTime = loadTime,
            Nodes = nodeCount,
            FaultsInjected = suspended.Acknowledged + resumed.Acknowledged,
        };

        foreach (var (pass, what) in new[] { (suspended, "suspend"), (resumed, "resume") })
        {
            var missed = all.Except(pass.Listed).Count();
            if (missed > 0)
            {
                outcome.Failures.Add($"the {what} pass's paging skipped {missed} of {all.Count} instances");
            }

            if (pass.Acknowledged != all.Count)
            {
                outcome.Failures.Add($"{pass.Acknowledged} of {all.Count} {what}s acknowledged ({pass.Refused} refused with 409)");
            }
        }

        if (!await Drain.UntilFaultedAsync(context.Backend, poison.Count, ct))
        {
            outcome.Failures.Add($"the {poison.Count} poison signals were not all dead-lettered within a minute after the resume");
        }

        if (await Drain.UntilCompletedAsync(context.Backend, workflows.Count, Stopwatch.GetTimestamp(), TimeSpan.FromMinutes(2), ct) is null)
        {
            outcome.Failures.Add("the resumed workflows did not all complete");
        }

        outcome.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"{count} workflows and {poisoned} poison workflows; suspended by {Callers} callers fed page by page ({PageSize} a page, by cursor) from the waiting list in {suspended.Time.TotalSeconds:0.00} s, signalled while suspended, resumed the same way from the suspended list in one burst of {resumed.Time.TotalSeconds:0.00} s ({all.Count / resumed.Time.TotalSeconds:0} resumes/s; {(resumed.Time <= TimeSpan.FromSeconds(1) ? "within a second" : "more than the issue's second: the service's resume rate on this machine, reported, not a verdict")}); the poison signals then failed into the dead letters"));
        return outcome;
    }

    /// <summary>
    /// One operator pass: pages through the list, each page's instances handed at once to <see cref="Callers"/>
    /// concurrent callers that suspend (or resume) them while the next page is read.
    /// </summary>
    private static async Task<Pass> PassAsync(FaultClient client, string filter, bool suspend, CancellationToken ct)
    {
        var listed = new HashSet<Guid>();
        var work = Channel.CreateUnbounded<Guid>(new UnboundedChannelOptions { SingleWriter = true });
        int acknowledged = 0, refused = 0;
        var started = Stopwatch.StartNew();
        var callers = Enumerable.Range(0, Callers).Select(_ => Task.Run(async () =>
        {
            await foreach (var id in work.Reader.ReadAllAsync(ct))
            {
                var changed = await client.SuspendOrResumeAsync(id, suspend, $"{(suspend ? "suspend" : "resume")}-{id}", ct);
                Interlocked.Increment(ref changed ? ref acknowledged : ref refused);
            }
        }, ct)).ToList();

        foreach (var definition in new[] { TwoSignalLoad.Definition, PoisonWorkflows.Definition })
        {
            await foreach (var page in client.PagesAsync($"definition={definition}&{filter}", PageSize, ct))
            {
                foreach (var id in page)
                {
                    listed.Add(id);
                    await work.Writer.WriteAsync(id, ct);
                }
            }
        }

        work.Writer.Complete();
        await Task.WhenAll(callers);
        return new Pass(listed, acknowledged, refused, started.Elapsed);
    }

    private sealed record Pass(IReadOnlySet<Guid> Listed, int Acknowledged, int Refused, TimeSpan Time);
}
