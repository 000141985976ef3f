using System.Diagnostics;
using System.Globalization;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Runs the fault table: each fault on each backend on a fresh database with fresh service processes, then reads the store
/// and holds it to the load's ledger (<see cref="HistoryChecker"/>); writes each row's JSON and regenerates the table.
/// </summary>
internal sealed class FaultRunner(FaultOptions options)
{
    public async Task<bool> RunAsync(CancellationToken cancellationToken)
    {
        var scenarios = FaultCatalog.All.Where(s => options.Only?.Contains(s.Name) ?? true).ToList();
        var rows = new List<FaultRow>();
        foreach (var backend in options.Backends)
        {
            foreach (var scenario in scenarios)
            {
                Console.WriteLine($"== fault {scenario.Number} {scenario.Name} on {backend} ({options.Tier.ToString().ToLowerInvariant()} tier)");
                var started = Stopwatch.GetTimestamp();
                var row = await RunRowAsync(scenario, backend, cancellationToken);
                FaultReport.Save(row, options.OutputDirectory);
                rows.Add(row);
                // The row's wall time, for the CI budget (the short tier runs in every CI run); never part of a verdict.
                Console.WriteLine($"   {row.Verdict}" + ((row.NotApplicable ?? row.NotRun) switch
                {
                    null => string.Create(CultureInfo.InvariantCulture, $": {row.Acknowledged:N0} acknowledged, {row.Lost} lost, {row.Duplicated} duplicated, {row.Stuck} stuck, {row.Completed:N0}/{row.ExpectedCompleted:N0} completed, {row.EarlySignals:N0} early signals, {row.Retried:N0} retried attempts; {Stopwatch.GetElapsedTime(started).TotalSeconds:0} s"),
                    { } why => $": {why}",
                }));
                foreach (var line in row.Failures.Concat(row.Samples))
                {
                    Console.WriteLine($"   - {line}");
                }
            }
        }

        Console.WriteLine($"wrote {FaultReport.Render(options.OutputDirectory)}");
        // A row that did not run is never counted as a pass: said at the end, where a truncated log still shows it.
        var notRun = rows.Where(r => r.NotRun is not null).ToList();
        Console.WriteLine($"fault rows: {rows.Count(r => r.Passed)} passed, {rows.Count(r => !r.Passed && r.NotApplicable is null && r.NotRun is null)} failed, " +
                          $"{notRun.Count} not run, {rows.Count(r => r.NotApplicable is not null)} not applicable");
        foreach (var row in notRun)
        {
            await Console.Error.WriteLineAsync($"NOT RUN: fault {row.Fault} on {row.Backend} ({row.Tier} tier): {row.NotRun}");
        }

        // Not run is no failure of the run: only what the required lists name must run, and a row that lacks it fails.
        return rows.All(r => r.Passed || r.NotApplicable is not null || r.NotRun is not null);
    }

    /// <summary>The tool a row needs that this machine lacks (its name in the required list, and why), or null.</summary>
    private static (string Tool, string Missing)? MissingTool(FaultScenario scenario) =>
        scenario.TurnsItsDiskReadOnly && ReadOnlyDisk.Unavailable() is { } noLoop ? (ReadOnlyDisk.Tool, noLoop)
        : scenario.FailoverCluster is not null && OwnedAutoFailoverCluster.Unavailable() is { } noCluster ? (OwnedAutoFailoverCluster.Tool, noCluster)
        : null;

    private async Task<FaultRow> RunRowAsync(FaultScenario scenario, string backendName, CancellationToken cancellationToken)
    {
        var tier = options.Tier.ToString().ToLowerInvariant();
        var row = new FaultRow
        {
            Number = scenario.Number,
            Fault = scenario.Name,
            Title = scenario.Title,
            Backend = backendName,
            Tier = tier,
            Date = DateTime.UtcNow.ToString("yyyy-MM-dd", CultureInfo.InvariantCulture),
            Commit = MachineFacts.CodeCommit(options.RepositoryRoot),
            Machine = MachineFacts.Summary(),
            Repeat = $"dotnet run -c Release --project tests/WorkflowService.Benchmarks -- faults --backend {backendName} --only {scenario.Name} --tier {tier}",
            Verdict = "not applicable",
        };
        if (scenario.NotApplicable(backendName) is { } reason)
        {
            return row with { NotApplicable = reason };
        }

        if (options.Tier == FaultTier.Short && scenario.LeftOutOfShortTier(backendName) is { } shortTier)
        {
            return row with { NotRun = $"not in the short tier: {shortTier}", Verdict = "not run" };
        }

        // A machine without loop devices (a container without /dev/loop*) cannot make a filesystem fail under a process, one
        // without pg_auto_failover cannot fail a primary over: the row says so, loudly, as not run; where CI lists the tool
        // in WORKFLOW_TESTS_REQUIRE_TOOLS it fails.
        if (MissingTool(scenario) is var (tool, missingTool))
        {
            if (RequiredLists.Requires(RequiredLists.Tools, tool))
            {
                var required = $"not run: {missingTool}, and {tool} is required here ({RequiredLists.Tools})";
                return row with { Verdict = "FAIL: " + required, Failures = [required] };
            }

            Console.WriteLine($"   NOT RUN on this machine: {missingTool}");
            return row with { NotRun = $"not run on this machine: {missingTool}", Verdict = "not run" };
        }

        if ((scenario.OwnsDatabaseServer(backendName) ? OwnedPostgresServer.Unavailable() : scenario.FillsItsDisk ? SmallDisk.Unavailable() : null) is { } missing)
        {
            return row with { Verdict = $"FAIL: not run: {missing}", Failures = [$"not run: {missing}"] };
        }

        var work = Path.Combine(Path.GetTempPath(), $"wf-faults-{backendName}-{scenario.Name}-{DateTime.UtcNow:yyyyMMdd-HHmmss}");
        Directory.CreateDirectory(work);
        // A row that stops or pauses PostgreSQL gets a server of its own; the others share the one --postgres names (on
        // MongoDB, a replica set cannot be owned here: such a row puts a proxy between the nodes and the one --mongodb names).
        await using var server = scenario.OwnsDatabaseServer(backendName) ? await OwnedPostgresServer.StartAsync(cancellationToken) : null;
        await using var disk = scenario.FillsItsDisk ? await SmallDisk.MountAsync(64, cancellationToken) : null;
        await using var readOnlyDisk = scenario.TurnsItsDiskReadOnly ? await ReadOnlyDisk.MountAsync(64, cancellationToken) : null;
        // A row that fails its primary over runs on a cluster of its own; the nodes and the checker reach whichever node is
        // primary through the multi-host connection string.
        await using var cluster = scenario.FailoverCluster is { } clusterOptions
            ? await OwnedAutoFailoverCluster.StartAsync(clusterOptions with { LogDirectory = work }, cancellationToken)
            : null;
        await using Backend backend = backendName switch
        {
            "sqlite" => new SqliteBackend(keep: false),
            "mongodb" => new MongoDbBackend(MongoDbBackend.RequireServer(options.MongoDb), keep: false),
            _ => new PostgresBackend(cluster?.MultiHostConnectionString ?? server?.AdminConnectionString ?? options.PostgresAdmin, keep: false),
        };
        await backend.ProvisionAsync(disk?.Path ?? readOnlyDisk?.Path ?? work, cancellationToken);
        // Bounded: a scenario that hangs fails its row, never the whole run.
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(options.Tier == FaultTier.Short ? TimeSpan.FromMinutes(5) : TimeSpan.FromMinutes(20));
        var context = new FaultContext { Backend = backend, Options = options, WorkDirectory = work, ApiKey = BenchApiKey.Create(), Cancellation = deadline.Token, Server = server, Disk = disk,
            ReadOnlyDisk = readOnlyDisk, Cluster = cluster };

        FaultOutcome outcome;
        int? maxConnections;
        var sampler = new ConnectionSampler(backend);
        try
        {
            outcome = await scenario.RunAsync(context);
        }
        catch (Exception e) when (!cancellationToken.IsCancellationRequested)
        {
            var what = deadline.IsCancellationRequested ? "did not finish within its deadline" : $"ended with {e.GetType().Name}: {e.Message}";
            return row with { Verdict = $"FAIL: the run {what} (service logs in {work})", Failures = [e.ToString()] };
        }
        finally
        {
            await sampler.DisposeAsync();
            maxConnections = sampler.Max;
        }

        // Every node has stopped: the store holds the run's final state.
        var clock = Stopwatch.StartNew();
        StoreSnapshot snapshot;
        await using (var store = await backend.OpenStoreReaderAsync(cancellationToken))
        {
            snapshot = await store.ReadAsync(cancellationToken);
        }

        var verdict = HistoryChecker.Check(outcome.Ledger.Entries, snapshot, outcome.Expectation);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"   checked {snapshot.Instances.Count:N0} instances, {snapshot.Signals.Count:N0} signals, {snapshot.History.Count:N0} history events in {clock.Elapsed.TotalSeconds:0.0} s"));
        var bound = outcome.Nodes * backend.ConnectionsPerNode;
        var failures = outcome.Failures.ToList();
        if (maxConnections > bound)
        {
            failures.Add($"{maxConnections} connections to the database, over {bound} (pool size × nodes)");
        }

        // A row whose lesson is loss (asynchronous replication) reports what was lost instead of failing on it.
        var reported = outcome.Expectation.LossReportedBecause is not null && verdict.LostOnly && failures.Count == 0;
        var passed = (verdict.Passed && failures.Count == 0) || reported;
        return row with
        {
            Nodes = outcome.Nodes,
            FaultsInjected = outcome.FaultsInjected,
            Acknowledged = verdict.Acknowledged,
            Retried = outcome.Ledger.UnansweredAttempts,
            Lost = verdict.Lost,
            Duplicated = verdict.Duplicated,
            Stuck = verdict.Stuck,
            Violations = verdict.Violations,
            Completed = verdict.Completed,
            ExpectedCompleted = verdict.ExpectedCompleted,
            EarlySignals = snapshot.History.Count(e => e.Type == "SignalParked"),
            Throughput = outcome.LoadTime > TimeSpan.Zero ? verdict.Acknowledged / outcome.LoadTime.TotalSeconds : 0,
            RecoverySeconds = outcome.Recovery?.TotalSeconds,
            RecoveryBoundSeconds = outcome.RecoveryBound?.TotalSeconds,
            MaxConnections = maxConnections,
            ConnectionBound = bound,
            Passed = passed,
            Verdict = reported ? $"reported: {string.Join("; ", verdict.Problems)} ({outcome.Expectation.LossReportedBecause})"
                : passed ? "pass" : "FAIL: " + string.Join("; ", verdict.Problems.Concat(failures)),
            Failures = failures,
            Samples = verdict.Samples,
            Notes = outcome.Notes,
        };
    }
}
