using System.Diagnostics;
using System.Globalization;
using WorkflowService.Benchmarks.Hosting;
using WorkflowService.Benchmarks.Reporting;

namespace WorkflowService.Benchmarks.Scenarios;

/// <summary>
/// What a node costs the database while it has nothing to do (target: idle polling per node ≤ 10 queries/s). A few
/// signal-roundtrip operations warm the node up (JIT, pools, caches, as after a burst of traffic); then nothing: the node
/// settles for <see cref="Settle"/> and is observed for <see cref="Window"/> without a request that reaches the database
/// (GET /metrics answers from memory). Counted in the window:
/// <list type="bullet">
/// <item>PostgreSQL: the server's transactions for the run's database (pg_stat_database, read from another database);</item>
/// <item>both: the commands EF Core executed, from the service's own log (EF Core command logging is on for this scenario);</item>
/// <item>SQLite: also the connections EF Core opened, each of which runs the store's PRAGMA command;</item>
/// <item>both: the dispatcher's idle polls (GET /metrics).</item>
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
    public const string EfCommandsPerSecond = "EF Core commands/s";
    public const string ServerTransactionsPerSecond = "server transactions/s";
    public const string ConnectionOpensPerSecond = "connection opens/s";
    public const string QueriesPerIdlePoll = "queries per idle poll";

    /// <summary>
    /// Longer than PostgreSQL's 10 s bound on publishing an idle session's counts, so that the warm-up's transactions are
    /// all counted before the window opens.
    /// </summary>
    public static readonly TimeSpan Settle = TimeSpan.FromSeconds(11);

    public static readonly TimeSpan Window = TimeSpan.FromSeconds(20);

    public override bool InSmokeTier => true;

    public override IReadOnlyList<string> DefinitionFiles => ["docs/examples/signal-roundtrip.json"];

    public override IReadOnlyDictionary<string, string> ServiceEnvironment => ServiceLogWindow.Environment;

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
        var log = context.Service?.LogPath ?? throw new InvalidOperationException("idle-polling needs the service's log");
        Console.WriteLine(FormattableString.Invariant($"  idle: settling {Settle.TotalSeconds:0} s, then observing {Window.TotalSeconds:0} s ..."));
        await Task.Delay(Settle, ct);

        var logFrom = ServiceLogWindow.Position(log);
        var transactionsFrom = await context.Backend.ReadServerTransactionsAsync(ct);
        var nodeFrom = await client.GetNodeCountersAsync(ct);
        var clock = Stopwatch.StartNew();
        await Task.Delay(Window, ct);
        var node = (await client.GetNodeCountersAsync(ct)).Minus(nodeFrom);
        var transactionsTo = await context.Backend.ReadServerTransactionsAsync(ct);
        var seconds = clock.Elapsed.TotalSeconds;
        var logged = ServiceLogWindow.Read(log, logFrom, ServiceLogWindow.Position(log));

        var measurement = new Measurement([], clock.Elapsed);
        double Rate(double count) => Math.Round(count / seconds, 2);
        var figures = measurement.Figures;
        figures[WindowSeconds] = Math.Round(seconds, 2);
        figures[IdlePollsPerSecond] = Rate(node.IdlePolls);
        figures[EfCommandsPerSecond] = Rate(logged.Commands);
        double queries;
        string how;
        if (transactionsFrom is { } before && transactionsTo is { } after)
        {
            figures[ServerTransactionsPerSecond] = Rate(after - before);
            queries = after - before;
            how = $"queries/s = the server's transactions for the run's database over the window ({context.Backend.ServerTransactionsSource}); " +
                  "a session publishes its counts at most once a second, so each end of the window is known to about a second of activity";
        }
        else
        {
            figures[ConnectionOpensPerSecond] = Rate(logged.ConnectionOpens);
            queries = logged.Commands + logged.ConnectionOpens;
            how = "queries/s = (commands EF Core executed + connections EF Core opened) over the window, from the service's own log " +
                  "(EF Core command and connection logging on for this scenario): every store query goes through EF Core, and the SQLite store " +
                  "runs one PRAGMA command (synchronous, busy_timeout) on every connection it opens; SQLite is a library inside the service, " +
                  "so there is no server to count for it";
        }

        figures[QueriesPerSecond] = Rate(queries);
        if (node.IdlePolls > 0)
        {
            figures[QueriesPerIdlePoll] = Math.Round(queries / node.IdlePolls, 2);
        }

        measurement.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"{WarmUpOps} signal-roundtrip operations, then no request reaching the database: {Settle.TotalSeconds:0} s to settle, then a {seconds:0.#} s window; {how}"));
        measurement.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"in the window: {node.IdlePolls} idle polls (GET /metrics), {logged.Commands} commands through EF Core ({Breakdown(logged)}), {logged.ConnectionOpens} connections opened by EF Core"));
        if (node.SignalsHandled > 0)
        {
            measurement.Notes.Add($"the node handled {node.SignalsHandled} signals during the idle window: it was not idle");
        }

        return measurement;
    }

    private static string Breakdown(ServiceLogWindow logged) => logged.ByStatement.Count == 0
        ? "none"
        : string.Join("; ", logged.ByStatement.OrderByDescending(s => s.Value).Select(s => $"{s.Value} × `{s.Key}`"));
}
