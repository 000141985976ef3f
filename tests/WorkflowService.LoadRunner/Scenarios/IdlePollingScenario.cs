using System.Diagnostics;
using System.Globalization;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// What a node costs the database while it has nothing to do (target: idle polling per node ≤ 10 queries/s). A few
/// signal-roundtrip operations warm the node up (JIT, pools, caches, as after a burst of traffic); then nothing: the node
/// settles for <see cref="Settle"/> and is observed for <see cref="Window"/>, asked only GET /metrics (answered from
/// memory, no database query). PostgreSQL's autovacuum would add its transactions to the node's: the scenario runs first,
/// on the fresh database, has the database vacuumed and analyzed before settling, and observes again (up to
/// <see cref="MaxWindows"/> windows) a window during which an autovacuum worker was in the run's database.
/// <list type="bullet">
/// <item>PostgreSQL: queries = the server's count of transactions of the run's database (pg_stat_database), every
/// session of the node included; the readings go through another database.</item>
/// <item>SQLite, a library inside the service with no server to ask: queries = the dispatcher's idle polls (GET /metrics)
/// × <see cref="StatementsPerIdlePoll"/>, the statements of one idle cycle; stated as such in the report.</item>
/// </list>
/// </summary>
internal sealed class IdlePollingScenario : Scenario
{
    /// <summary>The tier column's label; in the standard tier (not Scaled or Ceiling) and, being short, in smoke too.</summary>
    public const string Tier = "Idle";

    /// <summary>The headline figure (<see cref="Measurement.Figures"/> key).</summary>
    public const string QueriesPerSecond = "queries/s";

    // The other figures of the window.
    public const string WindowSeconds = "window s";
    public const string IdlePollsPerSecond = "idle polls/s";
    public const string ServerTransactionsPerSecond = "server transactions/s";
    public const string ServerTransactionsPerIdlePoll = "server transactions per idle poll";

    /// <summary>
    /// One idle cycle of the signal dispatcher (SignalDispatcher): the claim that finds nothing due, then the look-up of
    /// the next due time; then it waits for a wake-up or the poll interval. PostgreSQL's reports measure this figure
    /// (server transactions per idle poll) for the same store code.
    /// </summary>
    public const int StatementsPerIdlePoll = 2;

    /// <summary>
    /// Longer than PostgreSQL's 10 s bound on publishing an idle session's counts, so that the warm-up's transactions are
    /// all counted before the window opens.
    /// </summary>
    public static readonly TimeSpan Settle = TimeSpan.FromSeconds(11);

    public static readonly TimeSpan Window = TimeSpan.FromSeconds(20);

    /// <summary>Windows observed at most: one during which the database did background work of its own is observed again.</summary>
    public const int MaxWindows = 3;

    public override bool InSmokeTier => true;

    /// <summary>Idle is the point: a few operations, then nothing.</summary>
    public override bool SettlesJit => false;

    public override IReadOnlyList<string> DefinitionFiles => ["docs/examples/signal-roundtrip.json"];

    public override int WarmUpOps => 4;

    public override async Task WarmUpAsync(ScenarioContext context)
    {
        var client = context.Client;
        var ct = context.Cancellation;
        for (var i = 0; i < WarmUpOps; i++)
        {
            var id = Json.Id(await client.StartAsync(SignalRoundtripScenario.Definition, new { n = -1 - i }, ct));
            await client.SignalAsync(id, "go", new { value = i }, ct);
            if (Json.NotCompleted(await client.WaitForCompletionAsync(id, ct)) is { } problem)
            {
                throw new InvalidOperationException($"warm-up: {problem}");
            }
        }
    }

    public override async Task<Measurement> MeasureAsync(ScenarioContext context)
    {
        var client = context.Client;
        var ct = context.Cancellation;
        Console.WriteLine(FormattableString.Invariant($"  idle: settling {Settle.TotalSeconds:0} s, then observing {Window.TotalSeconds:0} s ..."));
        // The measured part (duration, CPU, other load) is settle + window(s); the figures are the (last) window's.
        var measured = Stopwatch.StartNew();
        var housekeeping = await context.Backend.DoHousekeepingNowAsync(ct);
        await Task.Delay(Settle, ct);

        var disturbed = new List<string>();
        long? transactionsFrom, transactionsTo;
        NodeCounters node;
        Stopwatch clock;
        DateTimeOffset opened;
        while (true)
        {
            transactionsFrom = await context.Backend.ReadServerTransactionsAsync(ct);
            var nodeFrom = await client.GetNodeCountersAsync(ct);
            clock = Stopwatch.StartNew();
            opened = DateTimeOffset.UtcNow;
            var disturbance = await context.Backend.WatchQuietWindowAsync(Window, ct);
            node = (await client.GetNodeCountersAsync(ct)).Minus(nodeFrom);
            transactionsTo = await context.Backend.ReadServerTransactionsAsync(ct);
            if (disturbance is null || disturbed.Count == MaxWindows - 1)
            {
                if (disturbance is not null)
                {
                    disturbed.Add($"{disturbance} (kept: the last of {MaxWindows} windows; its count includes that work)");
                }

                break;
            }

            disturbed.Add($"{disturbance}: window discarded");
            Console.WriteLine($"  idle: {disturbance}; observing again");
        }

        var seconds = clock.Elapsed.TotalSeconds;
        var measurement = new Measurement([], measured.Elapsed);
        double Rate(double count) => Math.Round(count / seconds, 2);
        var figures = measurement.Figures;
        figures[WindowSeconds] = Math.Round(seconds, 2);
        figures[IdlePollsPerSecond] = Rate(node.IdlePolls);
        string how;
        if (transactionsFrom is { } before && transactionsTo is { } after)
        {
            var transactions = after - before;
            figures[ServerTransactionsPerSecond] = Rate(transactions);
            figures[QueriesPerSecond] = Rate(transactions);
            if (node.IdlePolls > 0)
            {
                figures[ServerTransactionsPerIdlePoll] = Math.Round(transactions / (double)node.IdlePolls, 2);
            }

            how = $"queries/s = the server's transactions of the run's database in the window ({transactions}: {context.Backend.ServerTransactionsSource}); " +
                  "a session publishes its counts when it goes idle, at most once a second, so each end of the window is known to about a second of activity; " +
                  "the database's own background work in that database (autovacuum) would count too: the scenario vacuums and analyzes the database before settling, runs first (before other scenarios leave work for autovacuum), " +
                  "and observes again a window during which an autovacuum worker was in the database";
        }
        else
        {
            figures[QueriesPerSecond] = Rate(node.IdlePolls * StatementsPerIdlePoll);
            how = $"queries/s = idle polls (GET /metrics idlePolls, {node.IdlePolls} in the window) × {StatementsPerIdlePoll} statements per idle poll " +
                  "(the dispatcher's idle cycle: the claim that finds nothing due, then the look-up of the next due time) / window; SQLite is a library " +
                  "inside the service, with no server to count its statements, so this is derived, not measured: anything else an idle node might query " +
                  "is not in it (a PostgreSQL run of the same build measures the server's transactions per idle poll)";
        }

        measurement.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"{WarmUpOps} signal-roundtrip operations, then no request reaching the database: {Settle.TotalSeconds:0} s to settle, then the window ({opened:HH:mm:ss.fff} UTC, {seconds:0.##} s; the scenario's duration and CPU cover both), {node.IdlePolls} idle polls in it; {how}"));
        if (housekeeping is not null)
        {
            measurement.Notes.Add(housekeeping);
        }

        measurement.Notes.AddRange(disturbed);
        if (node.SignalsHandled > 0)
        {
            measurement.Notes.Add($"the node handled {node.SignalsHandled} signals during the idle window: it was not idle");
        }

        return measurement;
    }
}
