using WorkflowService.Engine;
using System.Text.Json;
using System.Text.Json.Nodes;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;
using static WorkflowService.UnitTests.Compilation.CompilerFixture;
using static WorkflowService.UnitTests.Execution.InstanceDriver;

namespace WorkflowService.UnitTests.Execution;

/// <summary>http steps (the request their signal carries, the response, the error path) and subWorkflow steps (the child's start and end).</summary>
public sealed class CallOutAndChildTests
{
    private const string Quote = """
        { "name": "t", "steps": [
          { "id": "call", "type": "http", "method": "POST", "url": "'https://rates.example/quote?p=' + input.product",
            "body": "({ sum: input.sum })", "headers": { "X-Key": "'k-' + input.product" }, "timeout": "PT30S", "retries": 4,
            "output": "quote", "onError": "manual", "errorOutput": "problem" },
          { "id": "done", "type": "complete", "result": "vars.quote" },
          { "id": "manual", "type": "complete", "result": "({ manual: vars.problem })" } ] }
        """;

    [Fact]
    public void An_http_step_queues_its_evaluated_request_due_at_once_and_waits_for_the_response()
    {
        var driver = For(Quote);

        var commit = driver.Start("""{ "product": "car", "sum": 1000 }""");

        var callOut = NewSignal(commit, "$http");
        Assert.Single(commit.NewSignals);
        Assert.Equal(driver.NowMs, callOut.DueAtMs);
        var request = JsonSerializer.Deserialize<CallOutRequest>(callOut.PayloadJson!, EngineJson.Options)!;
        Assert.Equal("POST", request.Method);
        Assert.Equal("https://rates.example/quote?p=car", request.Url);
        AssertJson("""{ "sum": 1000 }""", JsonNode.Parse(request.BodyJson!));
        Assert.Equal(new Dictionary<string, string> { ["X-Key"] = "k-car" }, request.Headers);
        Assert.Equal(30_000, request.TimeoutMs);
        Assert.Equal(4, request.Retries);
        Assert.Equal(InstanceStatus.Waiting, commit.Instance.Status);
        Assert.Equal(WaitKind.CallOut, commit.Instance.WaitKind);
        Assert.Equal(callOut.Id, commit.Instance.WaitSignalId);
        Assert.Equal("call", WorkflowExecutor.StepAwaiting(driver.Instance, callOut.Id, WaitKind.CallOut));
        Assert.Null(WorkflowExecutor.StepAwaiting(driver.Instance, callOut.Id, WaitKind.SubWorkflow));
        Assert.Null(WorkflowExecutor.StepAwaiting(driver.Instance, Guid.CreateVersion7(), WaitKind.CallOut));
        Assert.Equal(["InstanceStarted", "CallOutStarted"], HistoryTypes(commit));
        // History shows the URL with its query values hidden: they may carry keys, and readers of history see them.
        AssertJson("""{ "method": "POST", "url": "https://rates.example/quote?p=***" }""", EventData(commit, "CallOutStarted"));
    }

    [Fact]
    public void An_http_step_without_timeout_retries_or_body_uses_the_defaults()
    {
        var commit = For("""
            { "name": "t", "steps": [ { "id": "call", "type": "http", "method": "GET", "url": "'https://x.example'" }, { "id": "done", "type": "complete" } ] }
            """).Start();

        var request = JsonSerializer.Deserialize<CallOutRequest>(NewSignal(commit, "$http").PayloadJson!, EngineJson.Options)!;
        Assert.Equal(new CallOutRequest("GET", "https://x.example", null, null, 10_000, 2), request);
    }

    [Fact]
    public void The_response_in_place_of_the_request_resumes_the_http_step_with_it_in_output()
    {
        var driver = For(Quote);
        var callOut = NewSignal(driver.Start("""{ "product": "car", "sum": 1000 }"""), "$http");

        var response = callOut.WithPayload("""{ "status": 200, "body": { "premium": 12.5 } }""");

        var commit = driver.Send(response);

        Assert.Equal(new SignalTransition(callOut.Id, SignalStatus.Handled, response.LeaseToken), Assert.Single(commit.SignalTransitions));
        Assert.Equal(["CallOutCompleted", "InstanceCompleted"], HistoryTypes(commit));
        Assert.Equal("call", commit.History[0].StepId);
        AssertJson("""{ "status": 200, "body": { "premium": 12.5 } }""", JsonNode.Parse(commit.Instance.OutputJson!));
    }

    [Fact]
    public void A_call_that_failed_for_good_continues_at_the_error_path_with_the_error_in_errorOutput()
    {
        var driver = For(Quote);
        var callOut = NewSignal(driver.Start("""{ "product": "car", "sum": 1000 }"""), "$http");
        driver.Claimed(callOut);

        var run = driver.Executor.ResumeAtErrorPath(driver.Definition, driver.Instance, callOut, [], "503 Service Unavailable after 5 attempts", driver.Instant);

        var commit = Succeeded(run!);
        Assert.Equal(new SignalTransition(callOut.Id, SignalStatus.Handled, callOut.LeaseToken, "503 Service Unavailable after 5 attempts"),
            Assert.Single(commit.SignalTransitions));
        Assert.Equal(["StepFailed", "InstanceCompleted"], HistoryTypes(commit));
        AssertJson("""{ "error": "503 Service Unavailable after 5 attempts", "next": "manual" }""", EventData(commit, "StepFailed"));
        AssertJson("""{ "manual": { "step": "call", "message": "503 Service Unavailable after 5 attempts" } }""", JsonNode.Parse(commit.Instance.OutputJson!));
    }

    [Fact]
    public void A_call_that_failed_at_a_step_with_an_error_path_but_no_errorOutput_sets_no_variable()
    {
        var driver = For("""
            { "name": "t", "steps": [
              { "id": "call", "type": "http", "method": "GET", "url": "'https://x.example'", "onError": "manual" },
              { "id": "done", "type": "complete" },
              { "id": "manual", "type": "waitForSignal", "signal": "fixed", "next": "done" } ] }
            """);
        var callOut = NewSignal(driver.Start(), "$http");

        var commit = Succeeded(driver.Executor.ResumeAtErrorPath(driver.Definition, driver.Instance, callOut, [], "refused", driver.Instant)!);

        Assert.Equal(["StepFailed", "WaitStarted"], HistoryTypes(commit));
        Assert.Equal("manual", commit.Instance.WaitStepId);
        Assert.Equal("{}", commit.Instance.VariablesJson);
    }

    [Fact]
    public void A_call_that_failed_at_a_step_without_an_error_path_has_no_error_path_to_take()
    {
        var driver = For("""
            { "name": "t", "steps": [ { "id": "call", "type": "http", "method": "GET", "url": "'https://x.example'" }, { "id": "done", "type": "complete" } ] }
            """);
        var callOut = NewSignal(driver.Start(), "$http");

        Assert.Null(driver.Executor.ResumeAtErrorPath(driver.Definition, driver.Instance, callOut, [], "refused", driver.Instant));
        Assert.Null(driver.Executor.ResumeAtErrorPath(driver.Definition, driver.Instance, driver.Signal("$http"), [], "refused", driver.Instant));
    }

    [Fact]
    public void An_http_url_that_evaluates_to_null_fails_the_run_or_takes_the_error_path()
    {
        var failing = For("""
            { "name": "t", "steps": [ { "id": "call", "type": "http", "method": "GET", "url": "input?.url" }, { "id": "done", "type": "complete" } ] }
            """).StartFailing();

        Assert.Equal("call", failing.FailedStepId);
        // The step is named once: the run's failure adds it, the step's own message does not repeat it.
        Assert.Equal("step 'call': the url is null", failing.Error);

        var recovered = For("""
            { "name": "t", "steps": [ { "id": "call", "type": "http", "method": "GET", "url": "null", "onError": "manual", "errorOutput": "e" }, { "id": "done", "type": "complete" }, { "id": "manual", "type": "complete", "result": "vars.e" } ] }
            """).Start();

        // As with other expression failures, errorOutput's message does not name the step (its "step" does).
        var problem = JsonNode.Parse(recovered.Instance.OutputJson!)!;
        Assert.Equal("call", (string?)problem["step"]);
        Assert.Equal("the url is null", (string?)problem["message"]);
        Assert.Equal("the url is null", (string?)EventData(recovered, "StepFailed")!["error"]);
    }

    private const string Parent = """
        { "name": "parent", "steps": [
          { "id": "issue", "type": "subWorkflow", "definition": "policy-issuance", "version": 2, "input": "({ quote: input.quote })", "output": "policy" },
          { "id": "done", "type": "complete", "result": "vars.policy" } ] }
        """;

    [Fact]
    public void A_sub_workflow_step_queues_the_start_of_its_child_and_waits_for_its_end()
    {
        var driver = For(Parent);

        var commit = driver.Start("""{ "quote": "Q-1" }""");

        var childStart = NewSignal(commit, "$subflow");
        Assert.Equal(driver.NowMs, childStart.DueAtMs);
        var request = JsonSerializer.Deserialize<SubWorkflowRequest>(childStart.PayloadJson!, EngineJson.Options)!;
        Assert.Equal("policy-issuance", request.Definition);
        Assert.Equal(2, request.Version);
        AssertJson("""{ "quote": "Q-1" }""", JsonNode.Parse(request.InputJson!));
        Assert.Equal(WaitKind.SubWorkflow, commit.Instance.WaitKind);
        Assert.Equal(childStart.Id, commit.Instance.WaitSignalId);
        Assert.Equal("issue", WorkflowExecutor.StepAwaiting(driver.Instance, childStart.Id, WaitKind.SubWorkflow));
        Assert.Equal(["InstanceStarted", "WaitStarted"], HistoryTypes(commit));
        AssertJson("""{ "subWorkflow": "policy-issuance" }""", EventData(commit, "WaitStarted"));
    }

    [Fact]
    public void The_child_start_is_recorded_on_the_parent_which_keeps_waiting()
    {
        var driver = For(Parent);
        var childStart = NewSignal(driver.Start("""{ "quote": "Q-1" }"""), "$subflow");
        driver.Claimed(childStart);
        var childId = Guid.CreateVersion7();

        var commit = driver.Apply(WorkflowExecutor.ChildStarted(driver.Instance, childStart, childId, driver.Instant));

        Assert.Equal(new SignalTransition(childStart.Id, SignalStatus.Handled, childStart.LeaseToken), Assert.Single(commit.SignalTransitions));
        Assert.Equal(["SubWorkflowStarted"], HistoryTypes(commit));
        Assert.Equal("issue", commit.History[0].StepId);
        AssertJson($$"""{ "childId": "{{childId}}" }""", EventData(commit, "SubWorkflowStarted"));
        Assert.Equal(InstanceStatus.Waiting, commit.Instance.Status);
        Assert.Equal(WaitKind.SubWorkflow, commit.Instance.WaitKind);
    }

    [Fact]
    public void A_child_that_ends_signals_its_parent_which_resumes_with_the_childs_outcome_in_output()
    {
        var parent = For(Parent);
        var childStart = NewSignal(parent.Start("""{ "quote": "Q-1" }"""), "$subflow");
        var child = For("""{ "name": "policy-issuance", "steps": [ { "id": "done", "type": "complete", "result": "({ policy: 'P-' + input.quote })" } ] }""");

        var childEnd = child.Start("""{ "quote": "Q-1" }""", parentId: parent.Instance.Id, parentWaitId: childStart.Id);

        var ended = NewSignal(childEnd, "$child");
        Assert.Equal(parent.Instance.Id, ended.InstanceId);
        Assert.Equal(childStart.Id, ended.ParentWaitId);
        Assert.Equal(child.NowMs, ended.DueAtMs);
        AssertJson($$"""{ "instanceId": "{{childEnd.Instance.Id}}", "status": "Completed", "output": { "policy": "P-Q-1" } }""", JsonNode.Parse(ended.PayloadJson!));

        var resumed = parent.Send(ended);

        Assert.Equal(["SubWorkflowEnded", "InstanceCompleted"], HistoryTypes(resumed));
        AssertJson($$"""{ "instanceId": "{{childEnd.Instance.Id}}", "status": "Completed", "output": { "policy": "P-Q-1" } }""", JsonNode.Parse(resumed.Instance.OutputJson!));
    }

    [Fact]
    public void A_child_that_fails_tells_its_parent_the_error()
    {
        var parentId = Guid.CreateVersion7();
        var waitId = Guid.CreateVersion7();

        var commit = For("""{ "name": "c", "steps": [ { "id": "no", "type": "fail", "reason": "'no policy'" } ] }""").Start(parentId: parentId, parentWaitId: waitId);

        var ended = NewSignal(commit, "$child");
        AssertJson($$"""{ "instanceId": "{{commit.Instance.Id}}", "status": "Failed", "error": "no policy" }""", JsonNode.Parse(ended.PayloadJson!));
    }

    [Fact]
    public void An_instance_without_a_parent_signals_no_one_when_it_ends()
    {
        Assert.Empty(For("""{ "name": "c", "steps": [ { "id": "done", "type": "complete" } ] }""").Start().NewSignals);
    }
}
