using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Expressions;

namespace WorkflowService.Tests.Compilation;

/// <summary>What the compiler accepts and refuses in parallel steps, each problem with its JSON path.</summary>
public sealed class ParallelCompilerTests
{
    private readonly DefinitionCompiler _compiler = new(new ExpressionRuntime(Options.Create(new ExpressionOptions()), TimeProvider.System));

    [Fact]
    public void A_parallel_step_compiles_its_branches_in_their_own_scope()
    {
        var definition = Compile("""
            { "name": "ok", "steps": [
              { "id": "fork", "type": "parallel", "branches": [
                { "name": "a", "steps": [ { "id": "a1", "type": "waitForSignal", "signal": "x", "timeout": "PT1H", "onTimeout": "a2" }, { "id": "a2", "type": "assign", "set": { "a": "1" } } ] },
                { "name": "b", "steps": [ { "id": "b1", "type": "humanTask", "title": "Look" } ] } ] },
              { "id": "done", "type": "complete" } ] }
            """, out var diagnostics);

        Assert.Empty(diagnostics);
        var fork = Assert.IsType<ParallelStep>(definition!.Step("fork"));
        Assert.Equal(StepKind.Parallel, fork.Kind);
        Assert.Equal("done", fork.Next);
        Assert.Equal(["a", "b"], fork.ParallelBranches.Select(b => b.Name));
        Assert.Equal(["a1", "b1"], fork.ParallelBranches.Select(b => b.Entry));
        Assert.Equal(new ParallelScope("fork", "a"), definition.Step("a2").Within);
        // The last step of a branch has no next: it joins.
        Assert.Null(Assert.IsType<AssignStep>(definition.Step("a2")).Next);
        Assert.Null(Assert.IsType<HumanTaskStep>(definition.Step("b1")).Next);
        Assert.Equal(["fork", "a1", "a2", "b1", "done"], definition.Steps.Keys);
        Assert.Equal(["fork", "done"], definition.StepOrder.Select(s => s.Id));
    }

    [Fact]
    public void A_branch_cannot_jump_out_and_no_step_can_jump_into_a_branch()
    {
        Compile("""
            { "name": "escape", "steps": [
              { "id": "start", "type": "decision", "branches": [ { "when": "true", "next": "a1" } ], "otherwise": "fork" },
              { "id": "fork", "type": "parallel", "branches": [
                { "name": "a", "steps": [ { "id": "a1", "type": "assign", "set": { "a": "1" }, "next": "done" } ] },
                { "name": "b", "steps": [ { "id": "b1", "type": "waitForSignal", "signal": "go", "timeout": "PT1M", "onTimeout": "a1" } ] } ] },
              { "id": "done", "type": "complete" } ] }
            """, out var diagnostics);

        AssertProblem(diagnostics, "$.steps[0].branches[0].next", "'a1' is inside branch 'a' of parallel step 'fork'");
        AssertProblem(diagnostics, "$.steps[1].branches[0].steps[0].next", "'done' is outside branch 'a' of parallel step 'fork'");
        AssertProblem(diagnostics, "$.steps[1].branches[1].steps[0].onTimeout", "'a1' is inside branch 'a' of parallel step 'fork', not branch 'b'");
    }

    [Fact]
    public void Complete_in_a_branch_nested_parallel_steps_and_malformed_branches_are_refused_with_their_paths()
    {
        Compile("""
            { "name": "bad", "steps": [
              { "id": "fork", "type": "parallel", "branches": [
                { "name": "a", "steps": [ { "id": "a1", "type": "complete" } ] },
                { "name": "a", "steps": [ { "id": "inner", "type": "parallel", "branches": [ { "name": "x", "steps": [ { "id": "x1", "type": "delay", "duration": "PT1S" } ] } ] } ] },
                { "name": "no steps", "steps": [] },
                { "when": "true", "next": "done", "steps": [ { "id": "fork", "type": "delay", "duration": "PT1S" } ] } ] },
              { "id": "empty", "type": "parallel", "branches": [], "next": "done" },
              { "id": "done", "type": "complete" } ] }
            """, out var diagnostics);

        AssertProblem(diagnostics, "$.steps[0].branches[0].steps[0].type", "a complete step cannot be inside branch 'a' of parallel step 'fork'");
        AssertProblem(diagnostics, "$.steps[0].branches[1].name", "duplicate branch name 'a'");
        AssertProblem(diagnostics, "$.steps[0].branches[1].steps[0].type", "parallel steps do not nest");
        AssertProblem(diagnostics, "$.steps[0].branches[2].name", "name is required");
        AssertProblem(diagnostics, "$.steps[0].branches[2].steps", "a parallel branch needs at least one step");
        AssertProblem(diagnostics, "$.steps[0].branches[3].name", "name is required");
        AssertProblem(diagnostics, "$.steps[0].branches[3].when", "when does not apply to a parallel branch");
        AssertProblem(diagnostics, "$.steps[0].branches[3].next", "next does not apply to a parallel branch");
        AssertProblem(diagnostics, "$.steps[0].branches[3].steps[0].id", "duplicate step id 'fork' (first used at $.steps[0])");
        AssertProblem(diagnostics, "$.steps[1].branches", "a parallel step needs at least one branch");
    }

    [Fact]
    public void Decision_branches_do_not_take_parallel_fields_nor_parallel_steps_decision_fields()
    {
        Compile("""
            { "name": "mixed", "steps": [
              { "id": "choose", "type": "decision", "branches": [ { "when": "true", "next": "fork", "name": "x", "steps": [] } ] },
              { "id": "fork", "type": "parallel", "otherwise": "done", "onError": "done", "branches": [ { "name": "a", "steps": [ { "id": "a1", "type": "delay", "duration": "PT1S" } ] } ] },
              { "id": "done", "type": "complete" } ] }
            """, out var diagnostics);

        AssertProblem(diagnostics, "$.steps[0].branches[0].name", "does not apply to the step type decision");
        AssertProblem(diagnostics, "$.steps[0].branches[0].steps", "does not apply to the step type decision");
        AssertProblem(diagnostics, "$.steps[1].otherwise", "does not apply to the step type parallel");
        AssertProblem(diagnostics, "$.steps[1].onError", "does not apply to the step type parallel");
    }

    [Fact]
    public void A_parallel_step_at_the_end_of_the_list_needs_next_and_on_cancel_cannot_start_in_a_branch()
    {
        Compile("""
            { "name": "ends", "onCancel": "a1", "steps": [
              { "id": "fork", "type": "parallel", "branches": [ { "name": "a", "steps": [ { "id": "a1", "type": "assign", "set": { "a": "1" } } ] } ] } ] }
            """, out var diagnostics);

        AssertProblem(diagnostics, "$.steps[0].next", "needs 'next'");
        AssertProblem(diagnostics, "$.onCancel", "'a1' is inside branch 'a' of parallel step 'fork'");
    }

    [Fact]
    public void A_cancel_path_through_a_parallel_step_whose_branch_waits_is_refused_at_the_waiting_step()
    {
        Compile("""
            { "name": "cancel-waits", "onCancel": "undo", "steps": [
              { "id": "wait", "type": "waitForSignal", "signal": "go" },
              { "id": "done", "type": "complete" },
              { "id": "undo", "type": "parallel", "next": "undone", "branches": [
                { "name": "refund", "steps": [ { "id": "refund", "type": "assign", "set": { "refunded": "true" } } ] },
                { "name": "notify", "steps": [ { "id": "ask", "type": "waitForSignal", "signal": "ack" } ] } ] },
              { "id": "undone", "type": "complete" } ] }
            """, out var diagnostics);

        var problem = Assert.Single(diagnostics);
        Assert.Equal("$.steps[2].branches[1].steps[0]", problem.Path);
        Assert.Contains("reaches 'ask', which waits", problem.Message, StringComparison.Ordinal);
    }

    private CompiledDefinition? Compile(string json, out List<Diagnostic> diagnostics)
    {
        diagnostics = [];
        var document = DefinitionCompiler.Parse(json, diagnostics);
        return document is null ? null : _compiler.Compile(document, 1, diagnostics);
    }

    private static void AssertProblem(List<Diagnostic> diagnostics, string path, string message) =>
        Assert.True(diagnostics.Any(d => d.Path == path && d.Message.Contains(message, StringComparison.Ordinal)),
            $"no problem at {path} saying \"{message}\"; got:\n{string.Join("\n", diagnostics.Select(d => $"{d.Path}: {d.Message}"))}");
}
