using System.Diagnostics;
using System.Globalization;
using System.Net;
using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 13: the PostgreSQL primary fails over under load, on a pg_auto_failover cluster the runner owns (monitor,
/// primary, secondary); three nodes reach it through one multi-host connection string (Target Session Attributes=primary).
/// The primary's machine dies (keeper and postmaster SIGKILLed) and the monitor promotes the secondary, or an operator
/// switches over. The checker then reads the store on the new primary and holds it to the ledger. The row measures the
/// time from the fault to the first start served again and to every node ready again, and counts the 5xx answered.
/// </summary>
internal sealed class FailoverScenario : FaultScenario
{
    private const int CommandTimeoutSeconds = 5;
    private const int NodeCount = 3;
    private const int Concurrency = 16;
    private const string Ready = "GET /health/ready";
    private const string Start = "POST /instances";

    private static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(CommandTimeoutSeconds * 2);

    /// <summary>How long the row waits for the monitor to promote, then for a start served and every node ready again.</summary>
    private static readonly TimeSpan FollowWithin = TimeSpan.FromMinutes(2);

    /// <summary>Load on the new primary once every node is ready, before the load stops.</summary>
    private static readonly TimeSpan LoadAfter = TimeSpan.FromSeconds(5);

    public required FailoverFault Fault { get; init; }

    public AutoFailoverReplication Replication { get; init; } = AutoFailoverReplication.Synchronous;

    /// <summary>pg_auto_failover's own timeouts (20 s to call a node unhealthy, 30 s for a lost primary to step down), as a deployment has them.</summary>
    public override AutoFailoverOptions? FailoverCluster => new() { Replication = Replication };

    public override string? NotApplicable(string backend) => backend switch
    {
        "sqlite" => "the embedded store is one file of one node: there is no standby to fail over to",
        "mongodb" => "a replica set elects its own primary and the driver follows it; the runner cannot own a replica set here (it would have to start mongod)",
        _ => null,
    };

    public override string? LeftOutOfShortTier(string backend) =>
        "it starts a cluster of three PostgreSQL servers and waits out pg_auto_failover's timeouts (about a minute per failover): over CI's budget";

    public override async Task<FaultOutcome> RunAsync(FaultContext context)
    {
        var ct = context.Cancellation;
        var cluster = context.Cluster ?? throw new InvalidOperationException("a failover row runs on a pg_auto_failover cluster of its own");
        var settings = new Dictionary<string, string>(context.Backend.StoreTimeoutSettings(TimeSpan.FromSeconds(CommandTimeoutSeconds)))
        {
            ["Api__RequestTimeout"] = RequestTimeout.ToString("c", CultureInfo.InvariantCulture),
        };
        await using var nodes = context.CreateNodes(settings);
        await nodes.StartAsync(NodeCount, ct);
        await context.PublishAsync(nodes, TwoSignalLoad.DefinitionFile);
        var names = nodes.All.Select(n => n.Name).ToList();

        using var probe = new OutageProbe(context.ApiKey.Key);
        using var stopProbing = CancellationTokenSource.CreateLinkedTokenSource(ct);
        var probing = probe.RunAsync(nodes, stopProbing.Token);
        using var running = new LoadUnderFault(context, nodes, Name, Concurrency);
        AutoFailoverNodeState former;
        AutoFailoverNodeState promoted;
        long began;
        long promotedAt;
        TimeSpan loadTime;
        try
        {
            await Task.Delay(TimeSpan.FromSeconds(5), ct);
            former = await cluster.PrimaryAsync(ct);
            if (Fault == FailoverFault.PrimaryKilled)
            {
                await cluster.KillPrimaryPostmasterAsync(ct);
                // From the moment the primary's machine is dead: a start in flight before it may still have committed.
                began = Stopwatch.GetTimestamp();
            }
            else
            {
                began = Stopwatch.GetTimestamp();
                await cluster.SwitchoverAsync(ct);
            }

            promoted = await cluster.WaitForPrimaryChangeAsync(former, FollowWithin, ct);
            promotedAt = Stopwatch.GetTimestamp();
            await probe.WaitForStartServedAsync(began, FollowWithin, ct);
            var waited = Stopwatch.StartNew();
            while (ReadyAgain(probe.Answers, names, began).Count < names.Count && waited.Elapsed < FollowWithin)
            {
                await Task.Delay(TimeSpan.FromMilliseconds(250), ct);
            }

            await Task.Delay(LoadAfter, ct);
        }
        finally
        {
            loadTime = await running.StopAsync();
            await stopProbing.CancelAsync();
            await probing;
        }

        var load = running.Load;
        var mustComplete = load.MustComplete;
        var ready = ReadyAgain(probe.Answers, names, began);
        var served = probe.FirstStartServedSince(began);
        // Lost signals leave their instances waiting for good where loss is the row's lesson: a shorter wait then.
        var drained = await Drain.UntilCompletedAsync(context.Backend, mustComplete.Count, ready.Count > 0 ? ready.Values.Max() : began,
            Replication == AutoFailoverReplication.Synchronous ? TimeSpan.FromMinutes(2) : TimeSpan.FromSeconds(30), ct);
        var outcome = new FaultOutcome
        {
            Ledger = running.Ledger,
            Expectation = new CheckerExpectation
            {
                MustComplete = mustComplete,
                CompletedVersions = TwoSignalLoad.CompletedVersions,
                LossReportedBecause = Replication == AutoFailoverReplication.Asynchronous
                    ? "asynchronous replication: commits the standby had not received died with the primary; replication-quorum true on the standby (synchronous_standby_names) prevents it"
                    : null,
            },
            LoadTime = loadTime,
            Nodes = NodeCount,
            FaultsInjected = 1,
            Recovery = served is { } s && ready.Count == names.Count ? Stopwatch.GetElapsedTime(began, Math.Max(s, ready.Values.Max())) : null,
        };

        Describe(outcome, former, promoted, began, promotedAt, served, ready);
        Judge(outcome, nodes, probe.Answers, began, served, ready, names);
        FaultChecks.AddLoadFailures(outcome, load);
        if (drained is null && Replication == AutoFailoverReplication.Synchronous)
        {
            outcome.Failures.Add("the load's workflows did not all complete within 2 min of every node being ready again");
        }

        return outcome;
    }

    /// <summary>The row's notes: what was done, how the monitor and the nodes followed, and what callers were answered.</summary>
    private void Describe(FaultOutcome outcome, AutoFailoverNodeState former, AutoFailoverNodeState promoted, long began, long promotedAt, long? served,
        Dictionary<string, long> ready)
    {
        var fault = Fault == FailoverFault.PrimaryKilled
            ? $"the primary ({former.Name}) killed as a dead machine (its pg_autoctl keeper and postmaster SIGKILLed)"
            : $"a planned switchover (pg_autoctl perform switchover) from {former.Name}";
        outcome.Notes.Add($"{fault} under load; {Replication.ToString().ToLowerInvariant()} replication (the standby's replication-quorum {(Replication == AutoFailoverReplication.Synchronous ? "true" : "false")}); pg_auto_failover's default timeouts (20 s unhealthy, 30 s demote); {NodeCount} nodes on Host=primary,standby;Target Session Attributes=primary; store call timeout {CommandTimeoutSeconds} s, request timeout {RequestTimeout.TotalSeconds:0} s; load: {Concurrency} workers of start, 'a', 0-50 ms, 'b'; probes every 0.5 s per node: GET /health/ready and POST /instances");
        outcome.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"the monitor reported {promoted.Name} primary {Stopwatch.GetElapsedTime(began, promotedAt).TotalSeconds:0.0} s after the fault; the first start was served again after {(served is { } s ? $"{Stopwatch.GetElapsedTime(began, s).TotalSeconds:0.0} s" : "never")}; every node ready again after {(ready.Count > 0 ? string.Join(", ", ready.OrderBy(r => r.Key).Select(r => $"{r.Key} {Stopwatch.GetElapsedTime(began, r.Value).TotalSeconds:0.0} s")) : "never")}"));
    }

    /// <summary>What callers were answered from the fault on, held to the row's expectations: 503 with Retry-After during the switch, no 5xx after it.</summary>
    private static void Judge(FaultOutcome outcome, ServiceNodes nodes, IReadOnlyList<ProbeAnswer> answers, long began, long? served,
        Dictionary<string, long> ready, List<string> names)
    {
        var end = served is { } s && ready.Count == names.Count ? Math.Max(s, ready.Values.Max()) : long.MaxValue;
        var during = answers.Where(a => a.At >= began && a.At < end).ToList();
        var after = answers.Where(a => a.At >= end).ToList();
        var starts = during.Where(a => a.Call == Start).ToList();
        outcome.Notes.Add($"during the switch: starts {OutageProbe.Describe(starts)}; readiness {OutageProbe.Describe(during.Where(a => a.Call == Ready))}; after it: starts {OutageProbe.Describe(after.Where(a => a.Call == Start))}; the load's attempts retried (the whole run): {outcome.Ledger.UnansweredAttempts}");
        var wrong = starts.Where(a => !(a.Status == HttpStatusCode.Created || (a.Status == HttpStatusCode.ServiceUnavailable && a.RetryAfter && a.Problem))).ToList();
        if (wrong.Count > 0)
        {
            outcome.Failures.Add($"during the switch, {wrong.Count} starts were answered other than 201 or 503 problem details with Retry-After ({OutageProbe.Describe(wrong)})");
        }

        var afterwards = after.Where(a => a.Status is null || (int)a.Status >= 500).ToList();
        if (afterwards.Count > 0)
        {
            outcome.Failures.Add($"after every node was ready again and writes were served, {afterwards.Count} calls got a 5xx or no answer ({OutageProbe.Describe(afterwards)})");
        }

        if (served is null)
        {
            outcome.Failures.Add($"no start was served again within {FollowWithin.TotalMinutes:0} min of the new primary");
        }

        foreach (var node in nodes.All)
        {
            if (node.Process is not { HasExited: false })
            {
                outcome.Failures.Add($"{node.Name} exited during the failover");
            }
            else if (!ready.ContainsKey(node.Name))
            {
                var health = answers.Where(a => a.Node == node.Name && a.Call == Ready && a.At >= began);
                outcome.Failures.Add($"{node.Name} was not ready again within {FollowWithin.TotalMinutes:0} min (readiness: {OutageProbe.Describe(health)}); its log ends: {node.Process.Tail(5).ReplaceLineEndings(" | ")}");
            }
        }
    }

    /// <summary>
    /// When each node was ready again after <paramref name="since"/>: the end of its first 200 from /health/ready after its
    /// last other answer (a node that never faltered: its first 200). A node missing has not been ready again since.
    /// </summary>
    private static Dictionary<string, long> ReadyAgain(IReadOnlyList<ProbeAnswer> answers, List<string> nodes, long since)
    {
        var ready = new Dictionary<string, long>();
        foreach (var node in nodes)
        {
            var health = answers.Where(a => a.Node == node && a.Call == Ready && a.At >= since).OrderBy(a => a.At).ToList();
            var lastBad = health.LastOrDefault(a => a.Status != HttpStatusCode.OK)?.At ?? since;
            if (health.FirstOrDefault(a => a.Status == HttpStatusCode.OK && a.At >= lastBad) is { } good)
            {
                ready[node] = good.At + (long)(good.Took.TotalSeconds * Stopwatch.Frequency);
            }
        }

        return ready;
    }
}
