using System.Diagnostics;
using System.Globalization;
using WorkflowService.Benchmarks.Backends;
using WorkflowService.Benchmarks.Client;

namespace WorkflowService.Benchmarks.Faults;

/// <summary>
/// Runs the fault table: each fault on each backend on a fresh database with fresh service processes, then reads the store
/// and holds it to the load's ledger (<see cref="HistoryChecker"/>); writes each row's JSON and regenerates the table.
/// </summary>
internal sealed class FaultRunner(FaultOptions options)
{
    public async Task<bool> RunAsync(CancellationToken cancellationToken)
    {
        var passed = true;
        var scenarios = FaultCatalog.All.Where(s => options.Only?.Contains(s.Name) ?? true).ToList();
        foreach (var backend in options.Backends)
        {
            foreach (var scenario in scenarios)
            {
                Console.WriteLine($"== fault {scenario.Number} {scenario.Name} on {backend} ({options.Tier.ToString().ToLowerInvariant()} tier)");
                var started = Stopwatch.GetTimestamp();
                var row = await RunRowAsync(scenario, backend, cancellationToken);
                FaultReport.Save(row, options.OutputDirectory);
                // The row's wall time, for the CI budget (the short tier runs in every CI run); never part of a verdict.
                Console.WriteLine($"   {row.Verdict}" + (row.NotApplicable is null
                    ? string.Create(CultureInfo.InvariantCulture, $": {row.Acknowledged:N0} acknowledged, {row.Lost} lost, {row.Duplicated} duplicated, {row.Stuck} stuck, {row.Completed:N0}/{row.ExpectedCompleted:N0} completed, {row.EarlySignals:N0} early signals, {row.Retried:N0} retried attempts; {Stopwatch.GetElapsedTime(started).TotalSeconds:0} s")
                    : $": {row.NotApplicable}"));
                foreach (var line in row.Failures.Concat(row.Samples))
                {
                    Console.WriteLine($"   - {line}");
                }

                passed &= row.Passed || row.NotApplicable is not null;
            }
        }

        Console.WriteLine($"wrote {FaultReport.Render(options.OutputDirectory)}");
        return passed;
    }

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
            Repeat = $"dotnet run -c Release --project tests/WorkflowService.Benchmarks -- faults --backend {backendName} --only {scenario.Name} --tier {tier}",
            Verdict = "not applicable",
        };
        if (scenario.NotApplicable(backendName) is { } reason)
        {
            return row with { NotApplicable = reason };
        }

        if (options.Tier == FaultTier.Short && scenario.LeftOutOfShortTier(backendName) is { } shortTier)
        {
            return row with { NotApplicable = $"not in the short tier: {shortTier}" };
        }

        // A machine without loop devices (a container without /dev/loop*) cannot make a filesystem fail under a process:
        // the row says so, loudly, instead of failing the run over what the machine lacks.
        if (scenario.TurnsItsDiskReadOnly && ReadOnlyDisk.Unavailable() is { } noLoop)
        {
            Console.WriteLine($"   NOT RUN on this machine: {noLoop}");
            return row with { NotApplicable = $"not run on this machine: {noLoop}" };
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
        await using Backend backend = backendName switch
        {
            "sqlite" => new SqliteBackend(keep: false),
            "mongodb" => new MongoDbBackend(MongoDbBackend.RequireServer(options.MongoDb), keep: false),
            _ => new PostgresBackend(server?.AdminConnectionString ?? options.PostgresAdmin, keep: false),
        };
        await backend.ProvisionAsync(disk?.Path ?? readOnlyDisk?.Path ?? work, cancellationToken);
        // Bounded: a scenario that hangs fails its row, never the whole run.
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(options.Tier == FaultTier.Short ? TimeSpan.FromMinutes(5) : TimeSpan.FromMinutes(20));
        var context = new FaultContext { Backend = backend, Options = options, WorkDirectory = work, ApiKey = BenchApiKey.Create(), Cancellation = deadline.Token, Server = server, Disk = disk,
            ReadOnlyDisk = readOnlyDisk };

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

        var passed = verdict.Passed && failures.Count == 0;
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
            Verdict = passed ? "pass" : "FAIL: " + string.Join("; ", verdict.Problems.Concat(failures)),
            Failures = failures,
            Samples = verdict.Samples,
            Notes = outcome.Notes,
        };
    }
}
