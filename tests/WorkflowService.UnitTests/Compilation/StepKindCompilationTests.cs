using System.Text.Json.Nodes;
using static WorkflowService.UnitTests.Compilation.CompilerFixture;

namespace WorkflowService.UnitTests.Compilation;

/// <summary>
/// What the compiler accepts for each step kind, seen through the public result: the definition's own fields and its
/// canonical document (what the service stores and returns).
/// </summary>
public sealed class StepKindCompilationTests
{
    [Fact]
    public void A_definition_keeps_its_name_version_description_variables_start_step_and_cancel_path()
    {
        var definition = Valid("""
            { "name": "order-1.v2_x", "description": "Orders", "variables": { "count": 0, "tags": ["a"] }, "onCancel": "undo",
              "steps": [
                { "id": "first", "type": "waitForSignal", "signal": "go", "next": "done" },
                { "id": "undo", "type": "complete" },
                { "id": "done", "type": "complete" } ] }
            """);

        Assert.Equal("order-1.v2_x", definition.Name);
        Assert.Equal(1, definition.Version);
        Assert.Equal("Orders", definition.Description);
        AssertJson("""{ "count": 0, "tags": ["a"] }""", JsonNode.Parse(definition.InitialVariablesJson));
        Assert.Equal("first", definition.StartStepId);
        Assert.Equal("undo", definition.OnCancel);
        Assert.Equal(7, Compile(definition.Json, version: 7).Definition!.Version);
    }

    [Fact]
    public void A_definition_without_variables_starts_with_an_empty_object()
    {
        var definition = Valid(Steps("""{ "id": "done", "type": "complete" }"""));

        Assert.Equal("{}", definition.InitialVariablesJson);
        Assert.Null(definition.OnCancel);
    }

    [Fact]
    public void Property_names_are_read_case_insensitively()
    {
        var definition = Valid("""{ "NAME": "t", "Steps": [ { "ID": "done", "Type": "complete", "RESULT": "1" } ] }""");

        AssertJson("""{ "id": "done", "type": "complete", "result": "1" }""", CanonicalStep(definition, "done"));
    }

    [Fact]
    public void Assign_keeps_its_assignments_in_order_and_writes_next_only_where_it_does_not_fall_through()
    {
        var definition = Valid(Steps(
            """{ "id": "a", "type": "assign", "set": { "x": "1", "y": "vars.x + 1" } }""",
            """{ "id": "b", "type": "assign", "set": { "$z_1": "2" }, "next": "d" }""",
            """{ "id": "c", "type": "assign", "set": { "w": "3" }, "next": "d" }""",
            """{ "id": "d", "type": "complete" }"""));

        AssertJson("""{ "id": "a", "type": "assign", "set": { "x": "1", "y": "vars.x + 1" } }""", CanonicalStep(definition, "a"));
        Assert.Equal(["x", "y"], CanonicalStep(definition, "a")["set"]!.AsObject().Select(p => p.Key));
        AssertJson("""{ "id": "b", "type": "assign", "set": { "$z_1": "2" }, "next": "d" }""", CanonicalStep(definition, "b"));
        AssertJson("""{ "id": "c", "type": "assign", "set": { "w": "3" } }""", CanonicalStep(definition, "c"));
    }

    [Fact]
    public void WaitForSignal_keeps_its_signal_output_and_timeout_in_canonical_duration_form()
    {
        var definition = Valid(Steps(
            """{ "id": "w", "type": "waitForSignal", "signal": "customer.accepted-1", "output": "acceptance", "timeout": "PT3600S", "onTimeout": "late" }""",
            """{ "id": "done", "type": "complete" }""",
            """{ "id": "late", "type": "fail", "reason": "'late'" }"""));

        AssertJson("""{ "id": "w", "type": "waitForSignal", "signal": "customer.accepted-1", "output": "acceptance", "timeout": "PT1H", "onTimeout": "late" }""",
            CanonicalStep(definition, "w"));
    }

    [Theory]
    [InlineData("PT30S", "PT30S")]
    [InlineData("PT1.5S", "PT1.5S")]
    [InlineData("P1DT12H", "P1DT12H")]
    [InlineData("PT90M", "PT1H30M")]
    [InlineData("P1M", "P30D")]
    [InlineData("P1Y", "P365D")]
    [InlineData("PT0S", "PT0S")]
    [InlineData("P36500D", "P36500D")]
    public void Delay_accepts_ISO_8601_durations_from_zero_to_100_years(string duration, string canonical)
    {
        var definition = Valid(Steps(
            $$"""{ "id": "d", "type": "delay", "duration": "{{duration}}" }""",
            """{ "id": "done", "type": "complete" }"""));

        AssertJson($$"""{ "id": "d", "type": "delay", "duration": "{{canonical}}" }""", CanonicalStep(definition, "d"));
    }

    [Fact]
    public void Decision_keeps_its_branches_in_order_and_its_otherwise()
    {
        var definition = Valid(Steps(
            """{ "id": "choose", "type": "decision", "branches": [ { "when": "vars.x > 1", "next": "big" }, { "when": "vars.x === 1", "next": "one" } ], "otherwise": "small" }""",
            """{ "id": "big", "type": "complete" }""",
            """{ "id": "one", "type": "complete" }""",
            """{ "id": "small", "type": "fail", "reason": "'small'" }"""));

        AssertJson("""
            { "id": "choose", "type": "decision",
              "branches": [ { "when": "vars.x > 1", "next": "big" }, { "when": "vars.x === 1", "next": "one" } ], "otherwise": "small" }
            """, CanonicalStep(definition, "choose"));
    }

    [Fact]
    public void HumanTask_keeps_its_literal_title_and_role_and_its_assignee_and_data_expressions()
    {
        var definition = Valid(Steps(
            """{ "id": "review", "type": "humanTask", "title": "Review it", "role": "underwriter", "assignee": "'alice'", "data": "({ a: 1 })", "output": "review" }""",
            """{ "id": "done", "type": "complete" }"""));

        AssertJson("""{ "id": "review", "type": "humanTask", "title": "Review it", "role": "underwriter", "assignee": "'alice'", "data": "({ a: 1 })", "output": "review" }""",
            CanonicalStep(definition, "review"));
    }

    [Fact]
    public void Complete_and_fail_end_a_list_and_keep_their_result_and_reason()
    {
        var definition = Valid(Steps(
            """{ "id": "check", "type": "decision", "branches": [ { "when": "input.ok", "next": "ok" } ], "otherwise": "no" }""",
            """{ "id": "ok", "type": "complete", "result": "({ done: true })" }""",
            """{ "id": "no", "type": "fail", "reason": "'declined'" }""",
            """{ "id": "bare", "type": "complete" }"""));

        AssertJson("""{ "id": "ok", "type": "complete", "result": "({ done: true })" }""", CanonicalStep(definition, "ok"));
        AssertJson("""{ "id": "no", "type": "fail", "reason": "'declined'" }""", CanonicalStep(definition, "no"));
        AssertJson("""{ "id": "bare", "type": "complete" }""", CanonicalStep(definition, "bare"));
    }

    [Fact]
    public void Http_keeps_its_request_limits_output_and_error_path()
    {
        var definition = Valid(Steps(
            """
            { "id": "call", "type": "http", "method": "POST", "url": "'https://rates.example/quote'", "body": "({ sum: input.sum })",
              "headers": { "X-Key": "'k'" }, "timeout": "PT300S", "retries": 10, "output": "quote", "onError": "manual", "errorOutput": "problem" }
            """,
            """{ "id": "done", "type": "complete" }""",
            """{ "id": "manual", "type": "fail", "reason": "vars.problem.message" }"""));

        AssertJson("""
            { "id": "call", "type": "http", "method": "POST", "url": "'https://rates.example/quote'", "body": "({ sum: input.sum })",
              "headers": { "X-Key": "'k'" }, "timeout": "PT5M", "retries": 10, "output": "quote", "onError": "manual", "errorOutput": "problem" }
            """, CanonicalStep(definition, "call"));
    }

    [Theory]
    [InlineData("GET")]
    [InlineData("POST")]
    [InlineData("PUT")]
    [InlineData("PATCH")]
    [InlineData("DELETE")]
    public void Http_accepts_each_supported_method(string method)
    {
        var definition = Valid(Steps(
            $$"""{ "id": "call", "type": "http", "method": "{{method}}", "url": "'https://x.example'", "retries": 0 }""",
            """{ "id": "done", "type": "complete" }"""));

        AssertJson($$"""{ "id": "call", "type": "http", "method": "{{method}}", "url": "'https://x.example'", "retries": 0 }""", CanonicalStep(definition, "call"));
    }

    [Fact]
    public void SubWorkflow_keeps_its_child_definition_version_input_and_output()
    {
        var definition = Valid(Steps(
            """{ "id": "child", "type": "subWorkflow", "definition": "policy-issuance", "version": 3, "input": "({ id: input.id })", "output": "policy" }""",
            """{ "id": "latest", "type": "subWorkflow", "definition": "policy-issuance" }""",
            """{ "id": "done", "type": "complete" }"""));

        AssertJson("""{ "id": "child", "type": "subWorkflow", "definition": "policy-issuance", "version": 3, "input": "({ id: input.id })", "output": "policy" }""",
            CanonicalStep(definition, "child"));
        AssertJson("""{ "id": "latest", "type": "subWorkflow", "definition": "policy-issuance" }""", CanonicalStep(definition, "latest"));
    }

    [Fact]
    public void Parallel_keeps_its_named_branches_whose_last_steps_join_without_next()
    {
        var definition = Valid(Steps(
            """
            { "id": "fork", "type": "parallel", "branches": [
              { "name": "a", "steps": [ { "id": "a1", "type": "waitForSignal", "signal": "x", "timeout": "PT1H", "onTimeout": "a2" },
                                        { "id": "a2", "type": "assign", "set": { "a": "1" } } ] },
              { "name": "b", "steps": [ { "id": "b1", "type": "humanTask", "title": "Look" } ] } ] }
            """,
            """{ "id": "done", "type": "complete" }"""));

        AssertJson("""
            { "id": "fork", "type": "parallel", "branches": [
              { "name": "a", "steps": [ { "id": "a1", "type": "waitForSignal", "signal": "x", "timeout": "PT1H", "onTimeout": "a2" },
                                        { "id": "a2", "type": "assign", "set": { "a": "1" } } ] },
              { "name": "b", "steps": [ { "id": "b1", "type": "humanTask", "title": "Look" } ] } ] }
            """, CanonicalStep(definition, "fork"));
        Assert.Equal(["fork", "a1", "a2", "b1", "done"], definition.Steps.Keys);
    }

    [Fact]
    public void A_cancel_path_may_pass_through_steps_that_do_not_wait()
    {
        var definition = Valid("""
            { "name": "t", "onCancel": "undo", "steps": [
              { "id": "wait", "type": "waitForSignal", "signal": "go", "next": "done" },
              { "id": "undo", "type": "assign", "set": { "undone": "true" } },
              { "id": "check", "type": "decision", "branches": [ { "when": "vars.undone", "next": "fork" } ], "otherwise": "done" },
              { "id": "fork", "type": "parallel", "branches": [ { "name": "a", "steps": [ { "id": "a1", "type": "assign", "set": { "a": "1" } } ] } ] },
              { "id": "done", "type": "complete" } ] }
            """);

        Assert.Equal("undo", definition.OnCancel);
    }

    [Theory]
    [MemberData(nameof(Examples))]
    public void Every_documented_example_compiles_and_its_canonical_form_compiles_to_the_same_text(string file)
    {
        var definition = Valid(File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "examples", file)));

        Assert.Equal(definition.Json, Valid(definition.Json).Json);
    }

    public static TheoryData<string> Examples() =>
        new(Directory.GetFiles(Path.Combine(AppContext.BaseDirectory, "examples"), "*.json").Select(Path.GetFileName).Order()!);
}
