using System.Diagnostics;
using System.Globalization;
using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 4, its second half: a handler slower than the lease. Each workflow makes one http call-out to a local endpoint
/// that answers after twice the lease. The worker making the call must keep its claim (extend the lease) or, at worst,
/// lose it to one re-claim; it must never be run twice to completion, and the call must not be repeated without end.
/// </summary>
internal sealed class SlowHandlerScenario : FaultScenario
{
    public override string? LeftOutOfShortTier(string backend) => SeveralNodesOnlyInShortTier(backend);

    private const string DefinitionFile = "tests/WorkflowService.Benchmarks/Definitions/fault-slow-callout.json";

    /// <summary>A completed instance's version: its start (which queues the call-out) and the call-out's answer.</summary>
    private static readonly IReadOnlySet<int> CompletedVersions = new HashSet<int> { 2 };

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var nodeCount = context.SeveralNodes ? 3 : 1;
        var count = context.Short ? 16 : 48;
        var delay = FaultContext.LeaseDuration * 2;
        await using var endpoint = new CallOutEndpoint(delay);
        await using var nodes = context.CreateNodes(endpoint.ServiceSettings);
        await nodes.StartAsync(nodeCount, ct);
        await context.PublishAsync(nodes, DefinitionFile);

        var ledger = new Ledger();
        using var client = new FaultClient(nodes, ledger, context.ApiKey.Key, concurrency: count);
        var clock = Stopwatch.StartNew();
        var started = await Task.WhenAll(Enumerable.Range(0, count).Select(n =>
            client.StartAsync("fault-slow-callout", new { url = endpoint.Url.ToString(), n }, $"slow-{n}", ct)));
        var loadTime = clock.Elapsed;

        // Every call takes twice the lease; a worker per node runs eight at a time: a few rounds of calls, plus slack.
        var rounds = (int)Math.Ceiling(count / (8.0 * nodeCount));
        var deadline = delay * (rounds + 1) + TimeSpan.FromSeconds(30);
        var drained = await Drain.UntilCompletedAsync(context.Backend, count, Stopwatch.GetTimestamp(), deadline, ct);
        var outcome = new FaultOutcome
        {
            Ledger = ledger,
            Expectation = new CheckerExpectation { MustComplete = started.ToHashSet(), CompletedVersions = CompletedVersions },
            LoadTime = loadTime,
            Nodes = nodeCount,
            FaultsInjected = count,
        };

        var calls = endpoint.Calls;
        var once = calls.Values.Count(c => c == 1);
        var twice = calls.Values.Count(c => c == 2);
        var more = calls.Values.Count(c => c > 2);
        if (drained is null)
        {
            outcome.Failures.Add(string.Create(CultureInfo.InvariantCulture,
                $"the workflows did not all complete within {deadline.TotalSeconds:0} s: each call-out outlived its lease and was claimed and called again ({calls.Values.Sum()} calls for {count} workflows)"));
        }

        if (more > 0)
        {
            outcome.Failures.Add($"{more} workflows' call-out was made more than twice (re-claimed more than once)");
        }

        outcome.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"{count} workflows, each one http call-out answered after {delay.TotalSeconds:0} s (twice the lease of {FaultContext.LeaseDuration.TotalSeconds:0} s); calls made once: {once}, twice: {twice}, more: {more}{(drained is { } d ? $"; all completed {d.TotalSeconds:0.0} s after the last start" : "")}"));
        return outcome;
    }
}
