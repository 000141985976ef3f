using System.Diagnostics;
using System.Globalization;
using WorkflowService.Testing;
using WorkflowService.Testing.Processes;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// cold-start: a fresh service process under the sustained load (signal-roundtrip at c64) from the moment it answers.
/// Completions are counted per second since the process was started, for <see cref="Observed"/>, and then for
/// <see cref="WarmWindow"/> more, whose mean is the same process's warm throughput; the figure is the first second that
/// reaches <see cref="WarmShare"/> of it. Each build variant (as built: JIT only; published with ReadyToRun, as the
/// Dockerfile does; ReadyToRun with a start-up lever on top) is started <see cref="Rounds"/> times, in turns, on the run's
/// database, after one unmeasured start of each (so that every measured start finds its files in the page cache alike).
/// </summary>
internal sealed class ColdStartScenario : Scenario
{
    /// <summary>The signal workers of every process it starts (the sustained scenario's).</summary>
    public const int WorkersPerProcess = 8;

    public static readonly TimeSpan Observed = TimeSpan.FromSeconds(30);
    public static readonly TimeSpan WarmWindow = TimeSpan.FromSeconds(10);
    public const double WarmShare = 0.8;
    public const int Rounds = 3;

    private const string DefinitionFile = "docs/examples/signal-roundtrip.json";

    public override bool NeedsService => false;

    /// <summary>A start is the point: nothing runs before it, and no round of warm-up settles the JIT.</summary>
    public override bool SettlesJit => false;

    public override int WarmUpOps => 0;

    public override Task WarmUpAsync(ScenarioContext context) => Task.CompletedTask;

    /// <summary>The service published with ReadyToRun beside the Release build the runner made; null until prepared.</summary>
    private string? _readyToRunDll;

    public override Func<ScenarioContext, Task<string>>? Preparation => async context =>
    {
        var clock = Stopwatch.StartNew();
        _readyToRunDll = context.Options.Build
            ? await ServiceBuild.PublishReadyToRunAsync(context.Options.RepositoryRoot, context.Cancellation)
            : Path.Combine(context.Options.RepositoryRoot, ServiceBuild.ReadyToRunDirectory, "WorkflowService.dll");
        return context.Options.Build
            ? string.Create(CultureInfo.InvariantCulture, $"published the service with ReadyToRun (linux-x64) in {clock.Elapsed.TotalSeconds:0} s")
            : $"--no-build: the ReadyToRun publish already in {ServiceBuild.ReadyToRunDirectory}";
    };

    /// <summary>One way of starting the service: which build, and settings of the runtime on top.</summary>
    private sealed record Variant(string Name, string Dll, IReadOnlyDictionary<string, string> Settings);

    /// <summary>What one measured start saw.</summary>
    private sealed record Start(double ReadySeconds, int[] PerSecond, double WarmPerSecond, double? SecondsToWarmShare, double JitMs, double CpuSecondsObserved);

    public override async Task<Measurement> MeasureAsync(ScenarioContext context)
    {
        var ct = context.Cancellation;
        var readyToRun = _readyToRunDll ?? throw new InvalidOperationException("cold-start runs after its preparation");
        if (!File.Exists(readyToRun))
        {
            throw new InvalidOperationException($"no ReadyToRun publish at {readyToRun} (run without --no-build once)");
        }

        // Every ReadyToRun variant runs as the image does, with the Dockerfile's runtime settings: "ReadyToRun" is the image as
        // shipped (the targets table reads its figures); each other variant changes one lever on top of it.
        var image = ServiceBuild.ImageRuntimeSettings(context.Options.RepositoryRoot);
        Dictionary<string, string> Image(params (string Key, string Value)[] more)
        {
            var settings = new Dictionary<string, string>(image, StringComparer.Ordinal);
            foreach (var (key, value) in more)
            {
                settings[key] = value;
            }

            return settings;
        }

        Variant[] variants =
        [
            new("built (JIT)", context.Options.ServiceDll, new Dictionary<string, string>()),
            new("ReadyToRun", readyToRun, Image()),
            // Tiering waits until no new method has been compiled for 100 ms (the runtime's default) before it counts calls;
            // under a start's load that quiet moment comes late. The image counts from the first call; this is the default.
            new("ReadyToRun, call-counting delay 100 ms", readyToRun, Image(("DOTNET_TC_CallCountingDelayMs", "100"))),
            // Tiered PGO instruments hot tier-0 code before optimising it: better steady code, more work while warming.
            new("ReadyToRun, TieredPGO off", readyToRun, Image(("DOTNET_TieredPGO", "0"))),
        ];

        // Unmeasured: the definition is published once (it stays in the store for every later process), and each variant's
        // files are read once from the disk.
        foreach (var variant in variants)
        {
            await using var service = await context.StartService(variant.Dll, variant.Settings, ct);
            if (variant == variants[0])
            {
                using var client = new WorkflowClient(service.Address, 1, context.ApiKey);
                await client.PublishAsync(await File.ReadAllTextAsync(Path.Combine(context.Options.RepositoryRoot, DefinitionFile), ct), ct);
            }

            await service.StopAsync();
        }

        var samples = new List<OperationSample>();
        var starts = variants.ToDictionary(v => v, _ => new List<Start>());
        var clock = Stopwatch.StartNew();
        var index = 0;
        for (var round = 0; round < Rounds; round++)
        {
            // In turns, the order reversed every other round: A B C, C B A, A B C.
            foreach (var variant in round % 2 == 0 ? variants : variants.Reverse())
            {
                var (start, ops) = await RunOnceAsync(context, variant, index, ct);
                index += ops.Count;
                samples.AddRange(ops);
                starts[variant].Add(start);
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"  {variant.Name}: ready {start.ReadySeconds:0.00} s, warm {start.WarmPerSecond:0} ops/s, {100 * WarmShare:0} % of it after {(start.SecondsToWarmShare is { } s ? $"{s:0} s" : "never")}"));
            }
        }

        var measurement = new Measurement(samples, clock.Elapsed);
        foreach (var (variant, list) in starts)
        {
            var to80 = list.Select(s => s.SecondsToWarmShare ?? double.NaN).ToList();
            measurement.Figures[$"{variant.Name}: seconds to ready (median)"] = Median(list.Select(s => s.ReadySeconds));
            measurement.Figures[$"{variant.Name}: seconds to {100 * WarmShare:0} % of warm (median)"] = Median(to80);
            measurement.Figures[$"{variant.Name}: warm ops/s (median)"] = Math.Round(Median(list.Select(s => s.WarmPerSecond)), 1);
            measurement.Figures[$"{variant.Name}: JIT ms per start (median)"] = Math.Round(Median(list.Select(s => s.JitMs)), 0);
            measurement.Figures[$"{variant.Name}: service CPU s in the first {Observed.TotalSeconds:0} s (median)"] = Math.Round(Median(list.Select(s => s.CpuSecondsObserved)), 2);
            var perSecond = Enumerable.Range(0, (int)Observed.TotalSeconds).Select(second => Median(list.Select(s => (double)s.PerSecond[second])));
            measurement.Notes.Add($"{variant.Name}: completions in each of the first {Observed.TotalSeconds:0} seconds after the process was started (median of {list.Count} starts): "
                                  + string.Join(" ", perSecond.Select(c => c.ToString("0", CultureInfo.InvariantCulture))));
            measurement.Notes.Add($"{variant.Name}: seconds to {100 * WarmShare:0} % of warm, each start: "
                                  + string.Join(", ", to80.Select(s => double.IsNaN(s) ? "never" : s.ToString("0", CultureInfo.InvariantCulture)))
                                  + (variant.Settings.Count > 0 ? $" ({string.Join(", ", variant.Settings.Select(p => $"{p.Key}={p.Value}"))})" : string.Empty));
        }

        measurement.Notes.Add(string.Create(CultureInfo.InvariantCulture,
            $"Each start: the process started, the load ({Concurrency} clients in a closed loop, {WorkersPerProcess} signal workers) from the moment it answered its readiness probe, for {(Observed + WarmWindow).TotalSeconds:0} s since the start; warm = the mean of seconds {Observed.TotalSeconds:0} to {(Observed + WarmWindow).TotalSeconds:0}; a second counts from the process's start (the time to ready included). {Rounds} starts per variant in turns after one unmeasured start of each"));
        return measurement;
    }

    private async Task<(Start Start, List<OperationSample> Ops)> RunOnceAsync(ScenarioContext context, Variant variant, int firstIndex, CancellationToken ct)
    {
        var seconds = (int)(Observed + WarmWindow).TotalSeconds;
        var perSecond = new int[seconds];
        var ops = new List<OperationSample>();
        var started = Stopwatch.GetTimestamp();
        await using var service = await context.StartService(variant.Dll, variant.Settings, ct);
        var ready = Stopwatch.GetElapsedTime(started);
        using var client = new WorkflowClient(service.Address, Concurrency, context.ApiKey);
        var next = firstIndex - 1;
        var cpuObserved = 0.0;
        // On a loaded machine a start can take longer than the observed window: then the CPU is read at once.
        var untilObserved = Observed > ready ? Observed - ready : TimeSpan.Zero;
        using (var observed = new Timer(_ => cpuObserved = ResourceProbe.ProcessCpuSeconds(service.Pid), null, untilObserved, Timeout.InfiniteTimeSpan))
        {
            await Task.WhenAll(Enumerable.Range(0, Concurrency).Select(_ => Task.Run(async () =>
            {
                while (Stopwatch.GetElapsedTime(started) < Observed + WarmWindow)
                {
                    var index = Interlocked.Increment(ref next);
                    var began = Stopwatch.GetTimestamp();
                    OperationSample sample;
                    try
                    {
                        sample = await SignalRoundtripScenario.RoundtripAsync(client, index, ct);
                    }
                    catch (Exception e) when (e is not OperationCanceledException || !ct.IsCancellationRequested)
                    {
                        sample = OperationSample.Failed(Stopwatch.GetElapsedTime(began).TotalMilliseconds, e);
                    }

                    var second = (int)Stopwatch.GetElapsedTime(started).TotalSeconds;
                    lock (ops)
                    {
                        ops.Add(sample);
                        if (sample.Ok && second < seconds)
                        {
                            perSecond[second]++;
                        }
                    }

                    context.Progress.Record(sample.Ok);
                }
            }, ct)));
        }

        var jitMs = (await client.GetNodeCountersAsync(ct)).JitCompilationMs;
        await service.StopAsync();
        var warm = perSecond.Skip((int)Observed.TotalSeconds).Average();
        var reached = Array.FindIndex(perSecond, c => c >= WarmShare * warm);
        return (new Start(Math.Round(ready.TotalSeconds, 2), perSecond, warm, reached < 0 ? null : reached + 1, jitMs, cpuObserved), ops);
    }

    private static double Median(IEnumerable<double> values)
    {
        var sorted = values.Where(v => !double.IsNaN(v)).Order().ToList();
        return sorted.Count == 0 ? double.NaN : sorted.Count % 2 == 1 ? sorted[sorted.Count / 2] : (sorted[sorted.Count / 2 - 1] + sorted[sorted.Count / 2]) / 2;
    }
}
