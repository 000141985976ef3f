using System.Diagnostics;
using System.Globalization;
using System.Net;
using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 2: the database goes away under load, on a PostgreSQL server the runner owns. First stopped (pg_ctl stop) for a
/// while and started again; then paused (SIGSTOP of every server process) for longer than the command timeout. No node
/// exits; readiness says Unhealthy during the outage and healthy within 15 s after; the API answers 503 problem details
/// with Retry-After instead of hanging; connections stay within pool size × nodes; nothing acknowledged is lost.
/// On MongoDB the runner cannot own a replica set (it would have to start mongod), so the outage is what the nodes see
/// of one: every node reaches the primary through a <see cref="FaultProxy"/>, which first closes every connection and
/// each new one (a stopped server) and then holds every byte (a paused server). The replica set itself stays up: no
/// election, no restart, which a real outage of the primary would add.
/// </summary>
internal sealed class DatabaseOutageScenario : FaultScenario
{
    private const int CommandTimeoutSeconds = 5;

    /// <summary>Api:RequestTimeout of the run: any call is answered within this (503 at the latest), plus 3 s of slack.</summary>
    private static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(CommandTimeoutSeconds * 2);
    private static readonly TimeSpan HealthyWithin = TimeSpan.FromSeconds(15);

    public override bool OwnsDatabaseServer(string backend) => backend == "postgres";

    public override string? NotApplicable(string backend) => backend == "sqlite"
        ? "the embedded store is a file inside the service's own process: there is no server to stop or pause (its failures are fault 11, a full disk or a read-only file)"
        : null;

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var server = context.Server;
        // Without a server of its own (MongoDB), every node reaches the database through the proxy, which makes the outage.
        await using var proxy = server is null ? await ProxyAsync(context) : null;
        var outage = TimeSpan.FromSeconds(context.Short ? 10 : 30);
        // Longer than any call may take to be answered (see Judge), so that a call waiting out the pause shows as hung.
        var pause = TimeSpan.FromSeconds(CommandTimeoutSeconds * 4);
        const int nodeCount = 2;
        var settings = new Dictionary<string, string>(context.Backend.StoreTimeoutSettings(TimeSpan.FromSeconds(CommandTimeoutSeconds)))
        {
            ["Api__RequestTimeout"] = RequestTimeout.ToString("c", CultureInfo.InvariantCulture),
        };
        if (proxy is not null)
        {
            settings["Store__ConnectionString"] = context.Backend.ServiceConnectionStringVia(proxy.Port);
        }

        await using var nodes = context.CreateNodes(settings);
        await nodes.StartAsync(nodeCount, ct);
        await context.PublishAsync(nodes, TwoSignalLoad.DefinitionFile);

        using var probe = new OutageProbe(context.ApiKey.Key);
        using var stopProbing = CancellationTokenSource.CreateLinkedTokenSource(ct);
        var probing = probe.RunAsync(nodes, stopProbing.Token);
        using var running = new LoadUnderFault(context, nodes, "outage", concurrency: 16);
        var phases = new List<(string Name, long Began, long Ended)>();
        TimeSpan loadTime;
        try
        {
            await Task.Delay(TimeSpan.FromSeconds(3), ct);
            if (server is not null)
            {
                await server.StopAsync(ct);
            }
            else
            {
                proxy!.Refuse();
            }

            // The outage begins once the server is down (pg_ctl returns then): until that moment it still serves.
            var began = Stopwatch.GetTimestamp();
            await Task.Delay(outage, ct);
            // The outage ends when the server is told to start: it may serve before pg_ctl returns (seconds, on a loaded
            // machine), and a start answered 201 in between is no failure of the outage.
            var back = Stopwatch.GetTimestamp();
            if (server is not null)
            {
                await server.StartAgainAsync(ct);
            }
            else
            {
                proxy!.Heal();
            }

            phases.Add(("stopped", began, back));

            await Task.Delay(HealthyWithin + TimeSpan.FromSeconds(3), ct);
            if (server is not null)
            {
                server.Pause();
            }
            else
            {
                proxy!.Blackhole();
            }

            // As for the stop: the pause begins once every server process is stopped (Pause returns then), not while they
            // are being stopped one by one and still answer.
            began = Stopwatch.GetTimestamp();

            try
            {
                await Task.Delay(pause, ct);
            }
            finally
            {
                back = Stopwatch.GetTimestamp();
                server?.Resume();
                proxy?.Heal();
            }

            phases.Add(("paused", began, back));
            await Task.Delay(HealthyWithin + TimeSpan.FromSeconds(3), ct);
        }
        finally
        {
            loadTime = await running.StopAsync();
            await stopProbing.CancelAsync();
            await probing;
        }

        var load = running.Load;
        var mustComplete = load.MustComplete;
        var drained = await Drain.UntilCompletedAsync(context.Backend, mustComplete.Count, phases[^1].Ended, TimeSpan.FromMinutes(1), ct);
        var outcome = new FaultOutcome
        {
            Ledger = running.Ledger,
            Expectation = new CheckerExpectation { MustComplete = mustComplete, CompletedVersions = TwoSignalLoad.CompletedVersions },
            LoadTime = loadTime,
            Nodes = nodeCount,
            FaultsInjected = phases.Count,
            RecoveryBound = HealthyWithin,
        };
        var how = server is not null
            ? $"the database stopped for {outage.TotalSeconds:0} s, then paused (SIGSTOP) for {pause.TotalSeconds:0} s"
            : $"every node's connections to the primary closed by a TCP proxy, and each new one at once (a stopped server, as the nodes see it), for {outage.TotalSeconds:0} s, then every byte held by it (a paused server) for {pause.TotalSeconds:0} s; the replica set itself stayed up (no election)";
        outcome.Notes.Add($"{how}, over the store's call timeout of {CommandTimeoutSeconds} s ({string.Join(", ", context.Backend.StoreTimeoutSettings(TimeSpan.FromSeconds(CommandTimeoutSeconds)).Keys.Select(k => k.Replace("__", ":", StringComparison.Ordinal)))}) and the request timeout of {RequestTimeout.TotalSeconds:0} s (Api:RequestTimeout); {nodeCount} nodes; load: 16 workers of start, 'a', 0-50 ms, 'b'; probes every 0.5 s per node: GET /health/ready and POST /instances");
        foreach (var node in nodes.All.Where(n => n.Process is not { HasExited: false }))
        {
            outcome.Failures.Add($"{node.Name} exited during the outage");
        }

        // Recovery: the longest time any node took to be ready again after either phase.
        outcome.Recovery = phases.Select(p => Judge(outcome, probe.Answers, p.Name, p.Began, p.Ended, nodes.All.Select(n => n.Name).ToList()))
            .Aggregate((TimeSpan?)TimeSpan.Zero, (longest, next) => longest is { } a && next is { } b ? (a > b ? a : b) : null);

        FaultChecks.AddLoadFailures(outcome, load);
        if (drained is null)
        {
            outcome.Failures.Add("the load's workflows did not all complete after the database came back");
        }

        return outcome;
    }

    /// <summary>
    /// The probes' answers during one phase of the outage and the 15 s after it, held to what the issue asks; returns how
    /// long after the phase the last node was ready again (null if one never was).
    /// </summary>
    private static TimeSpan? Judge(FaultOutcome outcome, IReadOnlyList<ProbeAnswer> answers, string phase, long began, long ended, List<string> nodes)
    {
        // What was asked while the database was away, and answered before it was back (an answer after it may be a success).
        var during = answers.Where(a => a.At >= began && a.At + Ticks(a.Took) <= ended).ToList();
        var health = during.Where(a => a.Call == "GET /health/ready").ToList();
        var api = during.Where(a => a.Call == "POST /instances").ToList();
        foreach (var node in nodes.Where(n => !health.Any(a => a.Node == n && a.Status == HttpStatusCode.ServiceUnavailable)))
        {
            outcome.Failures.Add($"{phase}: {node}'s /health/ready never answered 503 Unhealthy ({OutageProbe.Describe(health.Where(a => a.Node == node))})");
        }

        var wrong = api.Where(a => a.Status is not HttpStatusCode.ServiceUnavailable || !a.RetryAfter || !a.Problem).ToList();
        if (api.Count == 0 || wrong.Count > 0)
        {
            outcome.Failures.Add($"{phase}: of {api.Count} starts asked during the outage, {wrong.Count} were not answered 503 problem details with Retry-After ({OutageProbe.Describe(wrong)})");
        }

        // Asked while the database was away: each must be answered within the request timeout however the database fails
        // (a store call that outlasts the deadline, an open or a cancel request the driver sends a paused server, goes on
        // in the background), plus 3 s for a machine shared with the load, two nodes and the database (12.1 s seen at a
        // load average of 43 on 2 cores; 13-14.5 s before the fix, when blocked cancel requests starved the thread pool).
        var bound = RequestTimeout + TimeSpan.FromSeconds(3);
        var hung = answers.Where(a => a.At >= began && a.At < ended && (a.Status is null || a.Took > bound)).ToList();
        if (hung.Count > 0)
        {
            outcome.Failures.Add(string.Create(CultureInfo.InvariantCulture,
                $"{phase}: {hung.Count} calls got no answer within {bound.TotalSeconds:0} s (longest {hung.Max(a => a.Took).TotalSeconds:0.0} s, {hung[0].Call})"));
        }

        var healthy = answers.Where(a => a.Call == "GET /health/ready" && a.At >= ended && a.Status == HttpStatusCode.OK)
            .GroupBy(a => a.Node).ToDictionary(g => g.Key, g => Stopwatch.GetElapsedTime(ended, g.Min(a => a.At + Ticks(a.Took))));
        foreach (var node in nodes)
        {
            if (!healthy.TryGetValue(node, out var after) || after > HealthyWithin)
            {
                outcome.Failures.Add($"{phase}: {node} was not ready again within {HealthyWithin.TotalSeconds:0} s of the database's return");
            }
        }

        outcome.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"{phase}: readiness answers during the outage: {OutageProbe.Describe(health)}; starts: {OutageProbe.Describe(api)}; ready again after {string.Join(", ", healthy.OrderBy(h => h.Key).Select(h => $"{h.Key} {h.Value.TotalSeconds:0.0} s"))}"));
        return healthy.Count == nodes.Count ? healthy.Values.Max() : null;
    }

    /// <summary>A started proxy to the database server, for a backend whose server the row cannot own.</summary>
    private static async Task<FaultProxy> ProxyAsync(FaultContext context)
    {
        var (host, port) = await context.Backend.ReadServerAddressAsync(context.Cancellation);
        var proxy = new FaultProxy(host, port);
        proxy.Start();
        return proxy;
    }

    private static long Ticks(TimeSpan took) => (long)(took.TotalSeconds * Stopwatch.Frequency);
}
