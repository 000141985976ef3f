using System.Collections.Concurrent;
using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>
/// The fault runs' workload (Definitions/fault-two-waits.json): start an instance, signal "a", wait 0-50 ms, signal "b", on
/// several workers at once. "b" often arrives before its wait is persisted (it is parked and applied with "a"'s run), so
/// every fault row exercises early signals too. Each call carries its own key; <c>copies</c> sends each call that many
/// times at once with the one key (duplicates in the same millisecond). Each worker then waits for its workflow to
/// complete before it starts the next (a closed loop), so the backlog a fault leaves is the load's concurrency, not
/// whatever an open loop would have queued beyond the service's throughput.
/// </summary>
internal sealed class TwoSignalLoad(FaultClient client, string runId)
{
    public const string Definition = "fault-two-waits";
    public const string DefinitionFile = "tests/WorkflowService.Benchmarks/Definitions/fault-two-waits.json";

    /// <summary>A completed instance's version: its start, "a" and "b" (a parked "b" adds one commit and is then applied within "a"'s).</summary>
    public static readonly IReadOnlySet<int> CompletedVersions = new HashSet<int> { 3 };

    private const int MaxFailureSamples = 5;

    private readonly ConcurrentBag<Guid> _complete = [];
    private readonly ConcurrentQueue<PairTiming> _timings = new();
    private readonly ConcurrentQueue<string> _failures = new();
    private int _failed;
    private int _next = -1;

    /// <summary>Instances whose start and both signals were acknowledged: each must complete.</summary>
    public IReadOnlySet<Guid> MustComplete => _complete.ToHashSet();

    /// <summary>Pairs that ended with an error the client could not retry away (a 4xx, or retries exhausted).</summary>
    public int Failed => Volatile.Read(ref _failed);

    public IReadOnlyList<string> FailureSamples => [.. _failures];

    /// <summary>Each completed pair: when it began (a stopwatch timestamp) and how long it took from its start to its completion.</summary>
    public IReadOnlyList<PairTiming> Timings => [.. _timings];

    /// <summary>
    /// Runs pairs on <paramref name="concurrency"/> workers until <paramref name="maxPairs"/> have been begun or
    /// <paramref name="keepGoing"/> says stop (asked before each new pair); pairs under way are finished.
    /// </summary>
    public Task RunAsync(int concurrency, int maxPairs, Func<bool> keepGoing, int copies, CancellationToken cancellationToken) =>
        RunAsync(concurrency, maxPairs, keepGoing, copies, reverseOdd: false, cancellationToken);

    /// <inheritdoc cref="RunAsync(int, int, Func{bool}, int, CancellationToken)"/>
    /// <param name="reverseOdd">
    /// Odd pairs send "b" first and "a" 0-50 ms after it: their "b" is certainly early (parked while the instance waits for
    /// "a"), where even pairs race.
    /// </param>
    public async Task RunAsync(int concurrency, int maxPairs, Func<bool> keepGoing, int copies, bool reverseOdd, CancellationToken cancellationToken)
    {
        await Task.WhenAll(Enumerable.Range(0, concurrency).Select(async _ =>
        {
            int i;
            while ((i = Interlocked.Increment(ref _next)) < maxPairs && keepGoing())
            {
                try
                {
                    await PairAsync(i, copies, reverseOdd && i % 2 == 1, cancellationToken);
                }
                catch (Exception e) when (e is ApiCallException or HttpRequestException or TaskCanceledException && !cancellationToken.IsCancellationRequested)
                {
                    Interlocked.Increment(ref _failed);
                    if (_failures.Count < MaxFailureSamples)
                    {
                        _failures.Enqueue($"pair {i}: {e.Message}");
                    }
                }
            }
        }));
    }

    private async Task PairAsync(int i, int copies, bool reversed, CancellationToken cancellationToken)
    {
        var began = System.Diagnostics.Stopwatch.GetTimestamp();
        var id = await CopiesAsync(copies, () => client.StartAsync(Definition, new { n = i }, $"{runId}-start-{i}", cancellationToken));
        var (first, second) = reversed ? ("b", "a") : ("a", "b");
        await CopiesAsync(copies, () => client.SignalAsync(id, first, new { i }, $"{runId}-{first}-{i}", cancellationToken));
        // The client's think time between the two signals (seeded per pair): 0-50 ms, so that "b" races "a"'s run.
        await Task.Delay((int)((uint)(i * 7919) % 51), cancellationToken);
        await CopiesAsync(copies, () => client.SignalAsync(id, second, new { i }, $"{runId}-{second}-{i}", cancellationToken));
        _complete.Add(id);
        await client.WaitForCompletionAsync(id, cancellationToken);
        _timings.Enqueue(new PairTiming(began, System.Diagnostics.Stopwatch.GetElapsedTime(began)));
    }

    /// <summary>The call <paramref name="copies"/> times at once; every answer is in the ledger, the checker compares them.</summary>
    private static async Task<Guid> CopiesAsync(int copies, Func<Task<Guid>> call) =>
        copies == 1 ? await call() : (await Task.WhenAll(Enumerable.Range(0, copies).Select(_ => call())))[0];
}

/// <summary>One pair of the load: when it began (a stopwatch timestamp) and how long it took to complete, think time included.</summary>
internal readonly record struct PairTiming(long Began, TimeSpan Took);
