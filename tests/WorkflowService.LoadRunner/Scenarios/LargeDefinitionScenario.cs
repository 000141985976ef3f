using System.Diagnostics;
using System.Globalization;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Expressions;
using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// Large definitions (one operation per size in <see cref="Sizes"/>, one after the other): a generated definition
/// (<see cref="LargeDefinitionGenerator"/>) is published, started twice, both instances are driven to completion by
/// their approval signals, and its definition diagram (first, laid out; then again, from the node's cache) and the first
/// instance's diagram are fetched. Every step is timed at the client over HTTP. The service compiles a definition when
/// it is published (the publishing node keeps the compiled definition, so its first start compiles nothing; another node
/// compiles on its first use): the compile time is inside the publish time, and is also measured alone here, with the
/// service's compiler in this process.
/// </summary>
internal sealed class LargeDefinitionScenario : Scenario
{
    public const string Compile = "compileInRunner";
    public const string Publish = "publish";
    public const string SecondStart = "secondStart";
    public const string Completion = "signalsToCompletion";
    public const string Diagram = "definitionDiagram";
    public const string DiagramAgain = "definitionDiagramCached";
    public const string InstanceDiagram = "instanceDiagram";

    /// <summary>The sizes measured, in steps.</summary>
    public required IReadOnlyList<int> Sizes { get; init; }

    /// <summary>A small definition of the same shape warms the publish, start, signal and diagram paths up.</summary>
    private const int WarmUpSteps = 40;

    private int _runs;

    public override int WarmUpOps => 1;

    /// <summary>
    /// Warms up once: every publish brings new expressions to compile, so the JIT share of a round never settles (a first
    /// run repeated rounds for the whole 90 s bound with two thirds of the last one compiling).
    /// </summary>
    public override bool SettlesJit => false;

    public override async Task WarmUpAsync(ScenarioContext context) =>
        _ = await RunAsync(context, LargeDefinitionGenerator.Generate(NextName(WarmUpSteps), WarmUpSteps));

    public override async Task<Measurement> MeasureAsync(ScenarioContext context)
    {
        var clock = Stopwatch.StartNew();
        var samples = new List<OperationSample>();
        var figures = new Dictionary<string, double>(StringComparer.Ordinal);
        foreach (var size in Sizes)
        {
            var definition = LargeDefinitionGenerator.Generate(NextName(size), size);
            OperationSample sample;
            try
            {
                sample = await RunAsync(context, definition);
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                sample = OperationSample.Failed(double.NaN, e);
            }

            samples.Add(sample);
            context.Progress.Record(sample.Ok);
            foreach (var (phase, ms) in sample.Phases)
            {
                figures[string.Create(CultureInfo.InvariantCulture, $"{size}.{phase}Ms")] = Math.Round(ms, 1);
            }

            figures[string.Create(CultureInfo.InvariantCulture, $"{size}.signals")] = definition.Signals.Count;
        }

        var measurement = new Measurement(samples, clock.Elapsed);
        foreach (var (figure, value) in figures)
        {
            measurement.Figures[figure] = value;
        }

        measurement.Notes.Add("one operation per size (" + string.Join(" and ", Sizes.Select(s => s.ToString(CultureInfo.InvariantCulture))) +
            " steps), concurrency 1, every figure the client's wall-clock time of one HTTP call (or, for the signals, of the calls)");
        measurement.Notes.Add($"{Compile}: parse and compile of the definition with the service's compiler in the runner process; the service " +
            $"compiles on publish (inside {Publish}), so {Phases.Start}, the first start, compiles nothing on this single node");
        measurement.Notes.Add($"{Phases.Start} and {SecondStart} run the new instance up to its first wait (the first approval, 4 blocks in); " +
            $"{Completion}: every approval signal sent, then the long-poll until Completed, for both instances");
        measurement.Notes.Add($"{Diagram}: the first GET of the definition's diagram.svg (the layout is computed then and cached per definition on the node); " +
            $"{DiagramAgain}: the same again; {InstanceDiagram}: the completed first instance's diagram.svg (the cached layout, the overlay from its history)");
        return measurement;
    }

    private string NextName(int steps) =>
        string.Create(CultureInfo.InvariantCulture, $"large-definition-{steps}-{Interlocked.Increment(ref _runs)}");

    private static async Task<OperationSample> RunAsync(ScenarioContext context, GeneratedDefinition definition)
    {
        var client = context.Client;
        var ct = context.Cancellation;
        var compileStarted = Stopwatch.GetTimestamp();
        var compiled = CompileHere(definition.Json);
        var compileMs = Stopwatch.GetElapsedTime(compileStarted).TotalMilliseconds;
        // The operation's own clock starts after the in-process compile: its end-to-end time is the service's part.
        var clock = new PhaseClock();
        clock.Record(Compile, compileMs);
        if (compiled.Steps.Count != definition.Steps)
        {
            return clock.Finish($"the generated definition has {compiled.Steps.Count} steps, not {definition.Steps}");
        }

        var published = await client.PublishVersionAsync(definition.Json, ct);
        clock.Lap(Publish);
        var version = (int)published["version"]!;
        var first = Json.Id(await client.StartAsync(definition.Name, LargeDefinitionGenerator.Input, ct));
        clock.Lap(Phases.Start);
        var second = Json.Id(await client.StartAsync(definition.Name, LargeDefinitionGenerator.Input, ct));
        clock.Lap(SecondStart);
        foreach (var id in new[] { first, second })
        {
            // A signal sent before its wait is reached is kept and consumed there, so all go at once.
            foreach (var signal in definition.Signals)
            {
                await client.SignalAsync(id, signal, new { ok = true }, ct);
            }
        }

        foreach (var id in new[] { first, second })
        {
            if (Json.NotCompleted(await client.WaitForCompletionAsync(id, ct)) is { } problem)
            {
                return clock.Finish(problem);
            }
        }

        clock.Lap(Completion);
        var svg = await client.GetTextAsync($"/definitions/{definition.Name}/versions/{version}/diagram.svg", ct);
        clock.Lap(Diagram);
        var again = await client.GetTextAsync($"/definitions/{definition.Name}/versions/{version}/diagram.svg", ct);
        clock.Lap(DiagramAgain);
        var instance = await client.GetTextAsync($"/instances/{first}/diagram.svg", ct);
        clock.Lap(InstanceDiagram);
        var drawn = CountSteps(svg);
        return clock.Finish(
            drawn != definition.Steps ? $"the diagram draws {drawn} steps, not {definition.Steps}"
            : again != svg ? "the definition's diagram differs from one request to the next"
            : CountSteps(instance) != definition.Steps ? "the instance diagram does not draw every step"
            : null);
    }

    /// <summary>The boxes drawn for steps (data-step attributes).</summary>
    private static int CountSteps(string svg)
    {
        var count = 0;
        for (var at = svg.IndexOf("data-step=", StringComparison.Ordinal); at >= 0; at = svg.IndexOf("data-step=", at + 1, StringComparison.Ordinal))
        {
            count++;
        }

        return count;
    }

    private static CompiledDefinition CompileHere(string json)
    {
        var diagnostics = new List<Diagnostic>();
        var compiler = new DefinitionCompiler(new ExpressionRuntime(Options.Create(new ExpressionOptions()), TimeProvider.System));
        var document = DefinitionCompiler.Parse(json, diagnostics);
        return (document is null ? null : compiler.Compile(document, 1, diagnostics))
            ?? throw new InvalidOperationException("the generated definition does not compile: " +
                string.Join("; ", diagnostics.Select(d => $"{d.Path}: {d.Message}")));
    }
}
