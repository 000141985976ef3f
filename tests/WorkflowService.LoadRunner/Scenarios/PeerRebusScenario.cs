using System.Diagnostics;
using System.Globalization;
using WorkflowService.LoadRunner.Peers;
using WorkflowService.RunnerBackends;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// A peer on the same database, machine and run: the signal-roundtrip workflow as a Rebus saga on Rebus's PostgreSQL
/// transport and saga storage (<see cref="RebusPeerSession"/>), the saga in its own process as our service runs in its
/// own, the load client's endpoint in this runner. Our service does not run meanwhile. The peer's process stands in for
/// the service in the resource columns (<see cref="OwnProcessPid"/>). Two shapes: the closed loop of our signal-roundtrip
/// scenarios (<see cref="Scenario.Ops"/> through <see cref="Scenario.Concurrency"/> clients), or, with
/// <see cref="Idle"/>, what the saga process costs the database while it has nothing to do, as idle-polling measures ours.
/// </summary>
internal sealed class PeerRebusScenario : Scenario
{
    public const string Family = "peer-rebus";

    /// <summary>The figures' names.</summary>
    public const string IdleTransactionsPerSecond = "idle transactions/s";
    public const string ErrorQueueMessages = "messages in Rebus's error queue";
    public const string SagasLeft = "sagas left in storage";

    private RebusPeerSession? _session;
    private RebusPeerSettings? _settings;

    /// <summary>Measures the idle window (no load) instead of operations.</summary>
    public bool Idle { get; init; }

    public override bool NeedsService => false;

    /// <summary>Longer than every smoke scenario and needing the peer: never in smoke; in --tier all or by --only.</summary>
    public override bool InSmokeTier => false;

    /// <summary>The idle window is the point there; operations settle the JIT as ours do.</summary>
    public override bool SettlesJit => !Idle;

    public override string? NotApplicableTo(string backend) => backend == "postgres"
        ? null
        : "Rebus's transport and saga storage are the PostgreSQL ones (Rebus.PostgreSql); the peer has no SQLite transport to compare with the embedded store";

    public override int? OwnProcessPid => _session?.PeerPid;

    public override int WarmUpOps => Idle ? 4 : Math.Max(32, Math.Min(Ops / 10, 500));

    public override async Task WarmUpAsync(ScenarioContext context)
    {
        var session = await SessionAsync(context);
        await RunLoopAsync(context, session, WarmUpOps, Idle ? 1 : Math.Min(Concurrency, WarmUpOps), i => -1 - i, record: false);
    }

    public override async Task<Measurement> MeasureAsync(ScenarioContext context)
    {
        var session = await SessionAsync(context);
        return Idle ? await MeasureIdleAsync(context, session) : await MeasureLoadAsync(context, session);
    }

    public override async ValueTask StopAsync()
    {
        if (_session is { } session)
        {
            _session = null;
            var code = await session.StopAsync();
            if (code != 0)
            {
                Console.WriteLine($"  the Rebus peer exited with {code}; its log: {session.PeerLogPath}");
            }

            await session.DisposeAsync();
        }
    }

    private async Task<RebusPeerSession> SessionAsync(ScenarioContext context)
    {
        if (_session is null)
        {
            _settings = RebusPeerSettings.FromEnvironment();
            var connection = context.Backend.ServiceEnvironment["Store__ConnectionString"];
            var work = Path.Combine(Path.GetTempPath(), "wf-bench-peers");
            _session = await RebusPeerSession.StartAsync(context.Options.RebusPeerDll, connection, _settings, work, context.Cancellation);
            Console.WriteLine($"  {_session.PeerReadyText}; log {_session.PeerLogPath}");
        }

        return _session;
    }

    private async Task<Measurement> MeasureLoadAsync(ScenarioContext context, RebusPeerSession session)
    {
        var clock = Stopwatch.StartNew();
        var samples = await RunLoopAsync(context, session, Ops, Concurrency, i => i, record: true);
        var measurement = new Measurement(samples, clock.Elapsed);
        await AddLeftoversAsync(context, measurement);
        measurement.Notes.Add(SettingsNote());
        measurement.Notes.Add("phases as our signal-roundtrip: start = StartRoundtrip sent → the saga's RoundtripStarted reply (the saga is stored and waiting, as our start's 2xx says; without it a \"go\" handled first would find no saga and be dropped); signalPublish = Go sent (its row committed to the transport's table); signalToCompletion = Go sent → the RoundtripCompleted reply received by the client's endpoint");
        return measurement;
    }

    private async Task<Measurement> MeasureIdleAsync(ScenarioContext context, RebusPeerSession session)
    {
        var ct = context.Cancellation;
        // The load client's endpoint polls its own queue: stopped, so that the window holds the saga process alone.
        session.StopClient();
        Console.WriteLine(FormattableString.Invariant(
            $"  idle: client endpoint stopped; settling {IdlePollingScenario.Settle.TotalSeconds:0} s, then observing {IdlePollingScenario.Window.TotalSeconds:0} s ..."));
        var measured = Stopwatch.StartNew();
        var housekeeping = await context.Backend.DoHousekeepingNowAsync(ct);
        await Task.Delay(IdlePollingScenario.Settle, ct);
        var disturbed = new List<string>();
        long transactions;
        Stopwatch window;
        while (true)
        {
            var from = await context.Backend.ReadServerTransactionsAsync(ct);
            window = Stopwatch.StartNew();
            var disturbance = await context.Backend.WatchQuietWindowAsync(IdlePollingScenario.Window, ct);
            var to = await context.Backend.ReadServerTransactionsAsync(ct);
            transactions = (to ?? 0) - (from ?? 0);
            if (disturbance is null || disturbed.Count == IdlePollingScenario.MaxWindows - 1)
            {
                if (disturbance is not null)
                {
                    disturbed.Add($"{disturbance} (kept: the last of {IdlePollingScenario.MaxWindows} windows; its count includes that work)");
                }

                break;
            }

            disturbed.Add($"{disturbance}: window discarded");
        }

        var seconds = window.Elapsed.TotalSeconds;
        var measurement = new Measurement([], measured.Elapsed);
        measurement.Figures[IdlePollingScenario.WindowSeconds] = Math.Round(seconds, 2);
        measurement.Figures[IdleTransactionsPerSecond] = Math.Round(transactions / seconds, 2);
        measurement.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"{WarmUpOps} roundtrips, then the load client's endpoint stopped and nothing sent: {IdlePollingScenario.Settle.TotalSeconds:0} s to settle, then a {seconds:0.##} s window; idle transactions/s = the server's transactions of the run's database in the window ({transactions}: {context.Backend.ServerTransactionsSource}), i.e. the saga process's receive polls (each a DELETE … FOR UPDATE SKIP LOCKED that finds nothing, in a transaction of its own), read as idle-polling reads ours"));
        measurement.Notes.Add(SettingsNote());
        if (housekeeping is not null)
        {
            measurement.Notes.Add(housekeeping);
        }

        measurement.Notes.AddRange(disturbed);
        return measurement;
    }

    private string SettingsNote() =>
        $"Rebus 8.9.5 with Rebus.PostgreSql 9.1.1 on Npgsql 10.0.3 (the service's driver); {_settings}; each endpoint's Npgsql pool 2 × its parallelism + 2 connections, at most {RebusPeerSession.MaxPoolSize} (Rebus holds a receive and a saga storage connection per message in flight); the service's columns (CPU, peak memory) are the saga process's";

    /// <summary>What the run left behind: messages Rebus gave up on, and sagas never completed (a completed saga's row is deleted).</summary>
    private static async Task AddLeftoversAsync(ScenarioContext context, Measurement measurement)
    {
        const string Leftovers =
            $"SELECT (SELECT count(*) FROM {RebusPeerSession.TransportTable} WHERE recipient = '{RebusPeerSession.ErrorQueue}'), (SELECT count(*) FROM {RebusPeerSession.SagaTable})";
        // The Rebus tables live beside the store's in the run's PostgreSQL database (the only backend this scenario runs on).
        var postgres = context.Backend as PostgresBackend
                       ?? throw new InvalidOperationException($"peer-rebus runs on postgres only, not {context.Backend.Name}");
        await using var connection = await postgres.OpenConnectionAsync(context.Cancellation);
        await using var command = connection.CreateCommand();
        command.CommandText = Leftovers;
        await using var reader = await command.ExecuteReaderAsync(context.Cancellation);
        await reader.ReadAsync(context.Cancellation);
        measurement.Figures[ErrorQueueMessages] = reader.GetInt64(0);
        measurement.Figures[SagasLeft] = reader.GetInt64(1);
    }

    private static Task<OperationSample[]> RunLoopAsync(
        ScenarioContext context, RebusPeerSession session, int ops, int concurrency, Func<int, int> index, bool record) =>
        ClosedLoopScenario.RunLoopAsync(context, ops, concurrency, index, record, i => session.RoundtripAsync(i, context.Cancellation));
}
