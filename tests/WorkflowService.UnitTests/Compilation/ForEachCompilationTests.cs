using WorkflowService.Engine.Definitions;
using static WorkflowService.UnitTests.Compilation.CompilerFixture;

namespace WorkflowService.UnitTests.Compilation;

/// <summary>What the compiler accepts of a forEach step, what it refuses and where, and its canonical form.</summary>
public sealed class ForEachCompilationTests
{
    private static string ForEach(string fields) =>
        Steps($$"""{ "id": "each", "type": "forEach", {{fields}} }""", """{ "id": "done", "type": "complete" }""");

    private const string Body = "\"steps\": [ { \"id\": \"work\", \"type\": \"assign\", \"set\": { \"x\": \"item\" } } ]";

    [Fact]
    public void A_forEach_with_a_body_compiles_its_steps_in_the_body_scope()
    {
        var definition = Valid(ForEach($"\"items\": \"input.lines\", \"mode\": \"sequential\", {Body}"));

        var step = Assert.IsType<ForEachStep>(definition.Step("each"));
        Assert.True(step.Sequential);
        Assert.Equal(1, step.OpenLimit(10));
        Assert.Equal(ParallelScope.BodyOf("each"), definition.Step("work").Within);
    }

    [Fact]
    public void The_canonical_form_round_trips_a_body_and_a_child_per_item()
    {
        foreach (var json in new[]
        {
            ForEach($"\"items\": \"input.lines\", \"maxConcurrency\": 3, \"completion\": {{ \"fraction\": 0.5 }}, \"toleratedFailures\": 2, {Body}, \"result\": \"vars.x\", \"output\": \"all\""),
            ForEach("\"items\": \"[1, 2]\", \"completion\": { \"firstSuccess\": true }, \"definition\": \"invoice\", \"version\": 2, \"input\": \"({ n: item })\""),
        })
        {
            var first = Valid(json);
            var again = Valid(first.Json);
            Assert.Equal(first.Json, again.Json);
            Assert.DoesNotContain("each.child", first.Json, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void Each_wrong_field_is_reported_at_its_path()
    {
        Refused(ForEach($"\"mode\": \"sequential\", \"maxConcurrency\": 2, \"completion\": {{ \"atLeast\": 1, \"fraction\": 0.5 }}, {Body}"),
            ("$.steps[0].items", "items is required for the step type forEach"),
            ("$.steps[0].maxConcurrency", "maxConcurrency applies to mode 'parallel' only (a sequential forEach runs one item at a time)"),
            ("$.steps[0].completion", "completion takes exactly one of atLeast (a count), fraction (0 to 1) or firstSuccess (true); leave it out to wait for every item"));
        Refused(ForEach($"\"items\": \"[]\", \"mode\": \"random\", \"completion\": {{ \"fraction\": 1.5 }}, {Body}"),
            ("$.steps[0].mode", "mode must be 'parallel' or 'sequential'"),
            ("$.steps[0].completion.fraction", "fraction must be above 0 and at most 1"));
        Refused(ForEach($"\"items\": \"[]\", \"definition\": \"child\", {Body}"),
            ("$.steps[0].definition", "a forEach step has either steps (its body) or definition (a child instance per item), not both"));
        Refused(ForEach("\"items\": \"[]\""),
            ("$.steps[0].steps", "a forEach step needs steps (its body, run once per item) or definition (a child instance per item)"));
    }

    [Fact]
    public void A_body_step_cannot_jump_out_of_the_body_and_forEach_steps_do_not_nest_in_parallel_branches()
    {
        Refused(ForEach("\"items\": \"[]\", \"steps\": [ { \"id\": \"work\", \"type\": \"assign\", \"set\": { \"x\": \"1\" }, \"next\": \"done\" } ]"),
            ("$.steps[0].steps[0].next", "'done' is outside the body of forEach step 'each'; a branch leaves only through its join (by running off the end of its steps)"));
        Refused(Steps("""
            { "id": "p", "type": "parallel", "branches": [ { "name": "a", "steps": [
              { "id": "each", "type": "forEach", "items": "[]", "steps": [ { "id": "w", "type": "assign", "set": { "x": "1" } } ] } ] } ] }
            """, """{ "id": "done", "type": "complete" }"""),
            ("$.steps[0].branches[0].steps[0].type", "a forEach step cannot be inside branch 'a' of parallel step 'p': forEach and parallel steps do not nest"));
    }
}
