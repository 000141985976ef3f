using static WorkflowService.UnitTests.Compilation.CompilerFixture;

namespace WorkflowService.UnitTests.Compilation;

/// <summary>The compiler's rules for parallel branches (their scope, their shape) and for the cancel path.</summary>
public sealed class ScopeDiagnosticTests
{
    private const string Done = """{ "id": "done", "type": "complete" }""";

    /// <summary>A parallel step "fork" with branches "a" (a1, a2) and "b" (b1), then "done"; <paramref name="before"/> goes first.</summary>
    private static string Fork(string a1Extra = "", string b1Extra = "", string? before = null) =>
        Steps([
            .. before is null ? Array.Empty<string>() : [before],
            $$"""
            { "id": "fork", "type": "parallel", "branches": [
              { "name": "a", "steps": [ { "id": "a1", "type": "assign", "set": { "a": "1" }{{a1Extra}} }, { "id": "a2", "type": "assign", "set": { "a2": "1" } } ] },
              { "name": "b", "steps": [ { "id": "b1", "type": "assign", "set": { "b": "1" }{{b1Extra}} } ] } ] }
            """,
            Done]);

    [Fact]
    public void A_branch_may_jump_within_itself()
    {
        Valid(Fork(a1Extra: """, "next": "a2" """));
    }

    [Fact]
    public void A_step_outside_a_branch_cannot_jump_into_it()
    {
        Refused(Fork(before: """{ "id": "start", "type": "assign", "set": { "x": "1" }, "next": "a2" }"""),
            ("$.steps[0].next", "'a2' is inside branch 'a' of parallel step 'fork'; a step outside the branch cannot jump into it (start the branch with its parallel step)"));
    }

    [Fact]
    public void A_decision_outside_a_branch_cannot_branch_or_fall_back_into_it()
    {
        Refused(Fork(before: """{ "id": "start", "type": "decision", "branches": [ { "when": "true", "next": "a1" } ], "otherwise": "b1" }"""),
            ("$.steps[0].branches[0].next", "'a1' is inside branch 'a' of parallel step 'fork'; a step outside the branch cannot jump into it (start the branch with its parallel step)"),
            ("$.steps[0].otherwise", "'b1' is inside branch 'b' of parallel step 'fork'; a step outside the branch cannot jump into it (start the branch with its parallel step)"));
    }

    [Fact]
    public void An_error_path_outside_a_branch_cannot_lead_into_it()
    {
        Refused(Fork(before: """{ "id": "start", "type": "assign", "set": { "x": "1" }, "onError": "b1" }"""),
            ("$.steps[0].onError", "'b1' is inside branch 'b' of parallel step 'fork'; a step outside the branch cannot jump into it (start the branch with its parallel step)"));
    }

    [Fact]
    public void A_branch_leaves_only_through_its_join()
    {
        Refused(Fork(a1Extra: """, "next": "done" """),
            ("$.steps[0].branches[0].steps[0].next", "'done' is outside branch 'a' of parallel step 'fork'; a branch leaves only through its join (by running off the end of its steps)"));
    }

    [Fact]
    public void A_branch_cannot_jump_into_another_branch()
    {
        Refused(Fork(b1Extra: """, "onError": "a2" """),
            ("$.steps[0].branches[1].steps[0].onError", "'a2' is inside branch 'a' of parallel step 'fork', not branch 'b' of parallel step 'fork'; a branch leaves only through its join"));
    }

    [Fact]
    public void A_timeout_in_a_branch_cannot_leave_it()
    {
        Refused(Steps(
                """
                { "id": "fork", "type": "parallel", "branches": [
                  { "name": "a", "steps": [ { "id": "a1", "type": "waitForSignal", "signal": "x", "timeout": "PT1M", "onTimeout": "late" } ] } ] }
                """,
                Done,
                """{ "id": "late", "type": "fail", "reason": "'late'" }"""),
            ("$.steps[0].branches[0].steps[0].onTimeout", "'late' is outside branch 'a' of parallel step 'fork'; a branch leaves only through its join (by running off the end of its steps)"));
    }

    [Fact]
    public void A_complete_step_cannot_be_inside_a_branch_but_fail_can()
    {
        Refused(Steps("""{ "id": "fork", "type": "parallel", "branches": [ { "name": "a", "steps": [ { "id": "a1", "type": "complete" } ] } ] }""", Done),
            ("$.steps[0].branches[0].steps[0].type", "a complete step cannot be inside branch 'a' of parallel step 'fork': a branch ends by running off the end of its steps (it joins); complete after the parallel step"));
        Valid(Steps("""{ "id": "fork", "type": "parallel", "branches": [ { "name": "a", "steps": [ { "id": "a1", "type": "fail", "reason": "'no'" } ] } ] }""", Done));
    }

    [Fact]
    public void Parallel_steps_do_not_nest()
    {
        Refused(Steps("""
                { "id": "fork", "type": "parallel", "branches": [ { "name": "a", "steps": [
                  { "id": "inner", "type": "parallel", "branches": [ { "name": "x", "steps": [ { "id": "x1", "type": "delay", "duration": "PT1S" } ] } ] } ] } ] }
                """, Done),
            ("$.steps[0].branches[0].steps[0].type", "a parallel step cannot be inside branch 'a' of parallel step 'fork': parallel steps do not nest (run the inner branches as branches of the outer step)"));
    }

    [Theory]
    [InlineData("""{ "id": "fork", "type": "parallel", "next": "done" }""")]
    [InlineData("""{ "id": "fork", "type": "parallel", "branches": [], "next": "done" }""")]
    public void A_parallel_step_needs_at_least_one_branch(string step)
    {
        Refused(Steps(step, Done), ("$.steps[0].branches", "a parallel step needs at least one branch"));
    }

    [Fact]
    public void A_parallel_branch_is_an_object_with_a_unique_valid_name_and_at_least_one_step()
    {
        Refused(Steps("""
                { "id": "fork", "type": "parallel", "branches": [
                  null,
                  { "name": "a", "steps": [ { "id": "a1", "type": "assign", "set": { "a": "1" } } ] },
                  { "name": "a", "steps": [ { "id": "a2", "type": "assign", "set": { "a": "2" } } ] },
                  { "steps": [ { "id": "c1", "type": "assign", "set": { "c": "1" } } ] },
                  { "name": "has space", "steps": [ { "id": "d1", "type": "assign", "set": { "d": "1" } } ] },
                  { "name": "e" },
                  { "name": "f", "steps": [] } ] }
                """, Done),
            ("$.steps[0].branches[0]", "a branch must be an object"),
            ("$.steps[0].branches[2].name", "duplicate branch name 'a' (first used at $.steps[0].branches[1])"),
            ("$.steps[0].branches[3].name", "name is required: letters, digits, '.', '_' or '-', starting with a letter or digit"),
            ("$.steps[0].branches[4].name", "name is required: letters, digits, '.', '_' or '-', starting with a letter or digit"),
            ("$.steps[0].branches[5].steps", "a parallel branch needs at least one step"),
            ("$.steps[0].branches[6].steps", "a parallel branch needs at least one step"));
    }

    [Fact]
    public void A_parallel_branch_has_no_when_or_next()
    {
        Refused(Steps("""
                { "id": "fork", "type": "parallel", "branches": [
                  { "name": "a", "when": "true", "next": "done", "steps": [ { "id": "a1", "type": "assign", "set": { "a": "1" } } ] } ] }
                """, Done),
            ("$.steps[0].branches[0].when", "when does not apply to a parallel branch (every branch runs)"),
            ("$.steps[0].branches[0].next", "next does not apply to a parallel branch (the branch starts at its first step; the parallel step's next follows the join)"));
    }

    [Fact]
    public void Step_ids_are_unique_across_branches_and_branch_steps_are_checked_like_any_step()
    {
        Refused(Steps("""
                { "id": "fork", "type": "parallel", "branches": [
                  { "name": "a", "steps": [ { "id": "done", "type": "waitForSignal" } ] },
                  { "name": "b", "steps": [ { "id": "b1", "type": "delay", "duration": "soon" } ] } ] }
                """, Done),
            ("$.steps[1].id", "duplicate step id 'done' (first used at $.steps[0].branches[0].steps[0])"),
            ("$.steps[0].branches[0].steps[0].signal", "signal is required: the name of the awaited signal (letters, digits, '.', '_' or '-')"),
            ("$.steps[0].branches[1].steps[0].duration", "'soon' is not an ISO 8601 duration from PT0S to P36500D, such as PT30S"));
    }

    // ---- onCancel ----

    [Fact]
    public void OnCancel_must_name_a_step()
    {
        Refused("""{ "name": "t", "onCancel": "undo", "steps": [ { "id": "done", "type": "complete" } ] }""",
            ("$.onCancel", "no step has the id 'undo'"));
    }

    [Fact]
    public void OnCancel_must_start_in_the_definitions_own_list()
    {
        Refused(Fork().Replace("""{ "name": "t",""", """{ "name": "t", "onCancel": "a1",""", StringComparison.Ordinal),
            ("$.onCancel", "'a1' is inside branch 'a' of parallel step 'fork'; the cancel path must start at a step of the definition's own list"));
    }

    [Theory]
    [InlineData("""{ "id": "w", "type": "waitForSignal", "signal": "go" }""")]
    [InlineData("""{ "id": "w", "type": "delay", "duration": "PT1S" }""")]
    [InlineData("""{ "id": "w", "type": "humanTask", "title": "T" }""")]
    [InlineData("""{ "id": "w", "type": "http", "method": "GET", "url": "'u'" }""")]
    [InlineData("""{ "id": "w", "type": "subWorkflow", "definition": "child" }""")]
    public void A_cancel_path_must_not_wait(string waiting)
    {
        Refused($$"""
                { "name": "t", "onCancel": "undo", "steps": [
                  { "id": "main", "type": "waitForSignal", "signal": "go", "next": "done" },
                  { "id": "undo", "type": "assign", "set": { "x": "1" } },
                  {{waiting}},
                  {{Done}} ] }
                """,
            ("$.steps[2]", "the cancel path (onCancel 'undo') reaches 'w', which waits; a cancel path must end without waiting"));
    }

    [Fact]
    public void A_cancel_path_that_reaches_a_wait_by_a_decision_an_error_path_or_a_parallel_branch_names_every_wait()
    {
        var (_, diagnostics) = Compile("""
            { "name": "t", "onCancel": "undo", "steps": [
              { "id": "undo", "type": "decision", "branches": [ { "when": "input.a", "next": "w1" } ], "otherwise": "fix" },
              { "id": "w1", "type": "delay", "duration": "PT1S", "next": "done" },
              { "id": "fix", "type": "assign", "set": { "x": "1" }, "onError": "w2", "next": "fork" },
              { "id": "w2", "type": "humanTask", "title": "T", "next": "done" },
              { "id": "fork", "type": "parallel", "branches": [ { "name": "a", "steps": [ { "id": "w3", "type": "waitForSignal", "signal": "go" } ] } ] },
              { "id": "done", "type": "complete" } ] }
            """);

        Assert.Equal(
            [
                ("$.steps[1]", "the cancel path (onCancel 'undo') reaches 'w1', which waits; a cancel path must end without waiting"),
                ("$.steps[3]", "the cancel path (onCancel 'undo') reaches 'w2', which waits; a cancel path must end without waiting"),
                ("$.steps[4].branches[0].steps[0]", "the cancel path (onCancel 'undo') reaches 'w3', which waits; a cancel path must end without waiting"),
            ],
            diagnostics.Select(d => (d.Path, d.Message)).Order());
    }

    [Fact]
    public void A_wait_outside_the_cancel_path_is_allowed()
    {
        Valid("""
            { "name": "t", "onCancel": "undo", "steps": [
              { "id": "w", "type": "waitForSignal", "signal": "go", "next": "done" },
              { "id": "undo", "type": "fail", "reason": "'cancelled'" },
              { "id": "done", "type": "complete" } ] }
            """);
    }
}
