using System.Text.Json;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Expressions;

namespace WorkflowService.Tests.Compilation;

/// <summary>compile → decompile → compile is the identity: over every example and over generated definitions.</summary>
public sealed class DecompilerTests
{
    private readonly DefinitionCompiler _compiler = new(new ExpressionRuntime(Options.Create(new ExpressionOptions()), TimeProvider.System));

    public static TheoryData<string> Examples()
    {
        var data = new TheoryData<string>();
        foreach (var file in Directory.GetFiles(Path.Combine(AppContext.BaseDirectory, "examples"), "*.json").Order())
        {
            data.Add(Path.GetFileName(file));
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Examples))]
    public void Every_example_round_trips_through_the_decompiler(string file)
    {
        var text = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "examples", file));
        AssertRoundTrip(text);
    }

    [Fact]
    public void Generated_definitions_round_trip_through_the_decompiler()
    {
        // A seeded generator, so a failure names a case that can be replayed; 500 cases over every step kind and edge.
        var withParallel = 0;
        for (var seed = 0; seed < 500; seed++)
        {
            var text = new DefinitionGenerator(seed).Generate();
            AssertRoundTrip(text, $"seed {seed}: {text}");
            withParallel += text.Contains("\"type\":\"parallel\"", StringComparison.Ordinal) ? 1 : 0;
        }

        Assert.True(withParallel >= 100, $"only {withParallel} of 500 generated definitions have a parallel step");
    }

    [Fact]
    public void The_canonical_form_drops_next_where_it_falls_through_and_normalises_durations()
    {
        var canonical = Canonical("""
            { "name": "canon", "steps": [
              { "id": "a", "type": "delay", "duration": "PT3600S", "next": "b" },
              { "id": "b", "type": "complete" } ] }
            """);

        Assert.Equal("""{"name":"canon","steps":[{"id":"a","type":"delay","duration":"PT1H"},{"id":"b","type":"complete"}]}""", canonical);
    }

    [Fact]
    public void A_parallel_branch_keeps_its_steps_in_order_and_writes_next_only_where_it_does_not_fall_through_or_join()
    {
        var canonical = Canonical("""
            { "name": "canon-parallel", "steps": [
              { "id": "fork", "type": "parallel", "next": "done", "branches": [
                { "name": "a", "steps": [ { "id": "a1", "type": "delay", "duration": "PT60S", "next": "a2" }, { "id": "a2", "type": "assign", "set": { "x": "1" } } ] },
                { "name": "b", "steps": [ { "id": "b1", "type": "waitForSignal", "signal": "go" } ] } ] },
              { "id": "done", "type": "complete" } ] }
            """);

        Assert.Equal("""{"name":"canon-parallel","steps":[{"id":"fork","type":"parallel","branches":[{"name":"a","steps":[{"id":"a1","type":"delay","duration":"PT1M"},{"id":"a2","type":"assign","set":{"x":"1"}}]},{"name":"b","steps":[{"id":"b1","type":"waitForSignal","signal":"go"}]}]},{"id":"done","type":"complete"}]}""", canonical);
    }

    private void AssertRoundTrip(string text, string? because = null)
    {
        var first = Canonical(text, because);
        var second = Canonical(first, because);
        Assert.True(first == second, $"{because}\nfirst:  {first}\nsecond: {second}");
    }

    private string Canonical(string text, string? because = null)
    {
        var diagnostics = new List<Diagnostic>();
        var document = DefinitionCompiler.Parse(text, diagnostics);
        var compiled = document is null ? null : _compiler.Compile(document, 1, diagnostics);
        Assert.True(compiled is not null, $"{because}\n{string.Join("\n", diagnostics.Select(d => $"{d.Path}: {d.Message}"))}");
        Assert.Equal(compiled.Json, DefinitionDecompiler.ToJson(compiled));
        return compiled.Json;
    }

    /// <summary>
    /// Random valid definitions: every step kind, fall-through and explicit next, timeouts, branches, error paths, and
    /// parallel steps whose branches are lists of their own (their transitions stay inside the branch; a branch's last
    /// continuing step may fall off the end, which joins).
    /// </summary>
    private sealed class DefinitionGenerator(int seed)
    {
        private static readonly string[] Expressions = ["vars.n + 1", "input.a === 2", "({ x: vars.n })", "'text'", "signal === null", "[1, 2, 3].length"];
        private static readonly string[] Durations = ["PT1S", "PT90S", "PT1H", "P1D", "P14DT2H", "PT0.5S"];
        private readonly Random _random = new(seed);

        public string Generate()
        {
            var count = _random.Next(1, 12);
            var ids = Enumerable.Range(0, count).Select(i => $"s{i}").ToList();
            var document = new Dictionary<string, object?> { ["name"] = $"generated-{seed}", ["steps"] = Steps(ids, branch: false) };
            if (_random.Next(3) == 0) document["variables"] = new Dictionary<string, object> { ["n"] = _random.Next(10) };
            if (_random.Next(3) == 0) document["description"] = "generated";
            return JsonSerializer.Serialize(document);
        }

        /// <summary>A list of steps whose transitions name only <paramref name="ids"/> (the list's own steps).</summary>
        private List<Dictionary<string, object?>> Steps(List<string> ids, bool branch)
        {
            var steps = new List<Dictionary<string, object?>>();
            for (var i = 0; i < ids.Count; i++)
            {
                var last = i == ids.Count - 1;
                var kind = branch
                    ? Pick("assign", "waitForSignal", "delay", "decision", "humanTask", "fail")
                    : last ? Pick("complete", "fail") : Pick("assign", "waitForSignal", "delay", "decision", "humanTask", "complete", "fail", "parallel");
                var step = new Dictionary<string, object?> { ["id"] = ids[i], ["type"] = kind };
                if (_random.Next(4) == 0) step["description"] = $"step {i}";
                switch (kind)
                {
                    case "assign":
                        step["set"] = Enumerable.Range(0, _random.Next(1, 3)).ToDictionary(k => $"v{k}", _ => Pick(Expressions));
                        break;
                    case "waitForSignal":
                        step["signal"] = Pick("go", "approve", "callback.done");
                        if (_random.Next(2) == 0) step["output"] = "payload";
                        if (_random.Next(2) == 0)
                        {
                            step["timeout"] = Pick(Durations);
                            step["onTimeout"] = Pick(ids);
                        }

                        break;
                    case "delay":
                        step["duration"] = Pick(Durations);
                        break;
                    case "decision":
                        step["branches"] = Enumerable.Range(0, _random.Next(1, 3))
                            .Select(_ => new Dictionary<string, string> { ["when"] = Pick(Expressions), ["next"] = Pick(ids) }).ToList();
                        if (_random.Next(2) == 0) step["otherwise"] = Pick(ids);
                        break;
                    case "humanTask":
                        step["title"] = "Review";
                        if (_random.Next(2) == 0) step["role"] = "clerk";
                        if (_random.Next(2) == 0) step["assignee"] = "'ana'";
                        if (_random.Next(2) == 0) step["data"] = Pick(Expressions);
                        if (_random.Next(2) == 0) step["output"] = "review";
                        break;
                    case "complete":
                        if (_random.Next(2) == 0) step["result"] = Pick(Expressions);
                        break;
                    case "fail":
                        step["reason"] = "'no'";
                        break;
                    case "parallel":
                        step["branches"] = Enumerable.Range(0, _random.Next(1, 4)).Select(b => new Dictionary<string, object?>
                        {
                            ["name"] = Pick("assessor", "police", "b.x", "third") + b,
                            ["steps"] = Steps(Enumerable.Range(0, _random.Next(1, 5)).Select(k => $"{ids[i]}-b{b}-{k}").ToList(), branch: true),
                        }).ToList();
                        break;
                }

                var continues = kind is "assign" or "waitForSignal" or "delay" or "humanTask" or "parallel";
                // In a branch a continuing step without next falls through, or joins at the end of the list.
                if (continues && _random.Next(3) == 0) step["next"] = Pick(ids);
                if (kind is not ("waitForSignal" or "delay" or "parallel") && _random.Next(4) == 0)
                {
                    step["onError"] = Pick(ids);
                    if (_random.Next(2) == 0) step["errorOutput"] = "error";
                }

                steps.Add(step);
            }

            return steps;
        }

        private string Pick(params string[] choices) => choices[_random.Next(choices.Length)];

        private string Pick(List<string> choices) => choices[_random.Next(choices.Count)];
    }
}
