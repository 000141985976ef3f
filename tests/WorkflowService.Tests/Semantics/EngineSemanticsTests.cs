using System.Net.Http.Json;
using Microsoft.EntityFrameworkCore.Diagnostics;
using Microsoft.Extensions.DependencyInjection;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Semantics;

/// <summary>Engine behaviour through the real HTTP pipeline, real signal workers and a real store.</summary>
public abstract class EngineSemanticsTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private readonly CommitCounter _commits = new();

    protected override Dictionary<string, string?> Settings => new() { ["Engine:RetryBackoff"] = "00:00:00.010", ["Engine:MaxAttempts"] = "3" };

    // Counts every commit of a service of its own while the start runs: on the shared service, a commit finishing the
    // work of an earlier test (a retry, a dead letter) would be counted too. Its signal workers are off, as they are on
    // a node that only serves the API: their idle polls claim (on SQLite a claim is a commit of the group-commit writer,
    // every poll interval) and would be counted whenever one lands while the start is under way. A start runs in the
    // request and needs no worker.
    [Fact]
    public async Task Steps_between_two_waits_run_in_memory_and_commit_once_at_the_wait()
    {
        var (_, api) = await StartServiceAsync(new(Settings) { ["Workers:Enabled"] = "false" },
            services => services.AddSingleton<IInterceptor>(_commits));
        var name = Definitions.Unique("once");
        await api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "variables": { "n": 0 },
              "steps": [
                { "id": "a1", "type": "assign", "set": { "n": "vars.n + 1" } },
                { "id": "a2", "type": "assign", "set": { "n": "vars.n + 1" } },
                { "id": "check", "type": "decision", "branches": [ { "when": "vars.n === 2", "next": "task" } ] },
                { "id": "task", "type": "humanTask", "title": "Look", "role": "clerk", "next": "done" },
                { "id": "done", "type": "complete" }
              ]
            }
            """);

        var before = _commits.Count;
        var started = await api.StartAsync(name);
        var commitsForStart = _commits.Count - before;

        // One transaction wrote the instance, four history events and the task: the whole first run.
        Assert.Equal(1, commitsForStart);
        Assert.Equal(InstanceStatus.Waiting, started.Status);
        Assert.Equal(2, started.Variables!.Value.GetProperty("n").GetInt32());
        Assert.Equal(["InstanceStarted", "StepCompleted", "StepCompleted", "BranchTaken", "TaskCreated"],
            (await api.HistoryAsync(started.Id)).Select(h => h.Type));
        var tasks = await api.Http.GetFromJsonAsync<PageView<TaskView>>($"/tasks?instanceId={started.Id}", WorkflowServiceFactory.Json);
        Assert.Single(tasks!.Items);
    }

    [Fact]
    public async Task A_signal_sent_before_its_wait_is_reached_is_kept_and_matched()
    {
        var name = Definitions.Unique("early");
        await Api.PublishAsync(Definitions.TwoWaits(name));
        var instance = await Api.StartAsync(name);

        // "b" arrives while the instance still waits for "a": it is parked, not lost.
        await Api.SignalAsync(instance.Id, "b", new { second = true });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).ParkedSignals == 1);
        await Api.SignalAsync(instance.Id, "a", new { first = true });
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.True(done.Output!.Value.GetProperty("b").GetProperty("second").GetBoolean());
        var history = (await Api.HistoryAsync(instance.Id)).Select(h => h.Type).ToList();
        Assert.Contains("SignalParked", history);
        Assert.All(await Api.SignalsAsync(instance.Id), s => Assert.Equal(SignalStatus.Handled, s.Status));
    }

    [Fact]
    public async Task A_signal_no_wait_ever_matches_is_visible_as_unmatched()
    {
        var name = Definitions.Unique("unmatched");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await Api.StartAsync(name);

        await Api.SignalAsync(instance.Id, "never-awaited", new { x = 1 });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).ParkedSignals == 1);
        await Api.SignalAsync(instance.Id, "go", new { value = 1 });
        await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        var stray = Assert.Single(await Api.SignalsAsync(instance.Id), s => s.Name == "never-awaited");
        Assert.Equal(SignalStatus.Unmatched, stray.Status);
        Assert.Contains("never-awaited", stray.LastError, StringComparison.Ordinal);
        Assert.Contains(await Api.HistoryAsync(instance.Id), h => h.Type == "SignalUnmatched");
    }

    [Fact]
    public async Task A_failing_step_is_retried_then_faults_the_instance_and_dead_letters_the_signal_with_the_reason()
    {
        var name = Definitions.Unique("faulty");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "wait", "type": "waitForSignal", "signal": "go", "output": "go" },
                { "id": "boom", "type": "assign", "set": { "x": "vars.go.explode ? noSuchFunction() : 1" } },
                { "id": "done", "type": "complete", "result": "vars.x" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);
        var signal = await Api.SignalAsync(instance.Id, "go", new { explode = true });

        var faulted = await Api.WaitForAsync(instance.Id, InstanceStatus.Faulted);

        Assert.Contains("noSuchFunction", faulted.Error, StringComparison.Ordinal);
        var deadLetters = await Api.Http.GetFromJsonAsync<PageView<SignalView>>("/dead-letters?limit=500", WorkflowServiceFactory.Json);
        var dead = Assert.Single(deadLetters!.Items, d => d.Id == signal.Id);
        Assert.Equal(3, dead.Attempts);
        Assert.Contains("noSuchFunction", dead.LastError, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_runaway_expression_faults_the_instance_with_the_reason_and_the_service_stays_up()
    {
        var name = Definitions.Unique("runaway");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "spin", "type": "assign", "set": { "x": "(() => { let i = 0; while (true) { i++; } })()" } },
                { "id": "done", "type": "complete" }
              ]
            }
            """);

        var instance = await Api.StartAsync(name);
        Assert.Equal(InstanceStatus.Running, instance.Status);
        var faulted = await Api.WaitForAsync(instance.Id, InstanceStatus.Faulted);

        Assert.Contains("limit", faulted.Error, StringComparison.Ordinal);
        using var ready = await Api.Http.GetAsync("/health/ready");
        Assert.True(ready.IsSuccessStatusCode);
        await Api.PublishExampleAsync("signal-roundtrip.json");
    }

    [Fact]
    public async Task Replaying_a_dead_letter_resumes_the_faulted_instance_from_its_wait()
    {
        var name = Definitions.Unique("replay");
        await Api.PublishAsync(Definitions.FaultsAfterGo(name));
        var instance = await Api.StartAsync(name);
        var signal = await Api.SignalAsync(instance.Id, "go");
        await Api.WaitForAsync(instance.Id, InstanceStatus.Faulted);

        using var replay = await Api.Http.PostAsync($"/dead-letters/{signal.Id}/replay", null);
        Assert.Equal(System.Net.HttpStatusCode.Accepted, replay.StatusCode);

        // The replayed signal is processed again from the wait: it fails again (the definition still calls a missing
        // function), which shows the instance left its faulted state and ran its attempts anew.
        await Eventually.WaitUntilAsync(async () =>
            (await Api.HistoryAsync(instance.Id)).Count(h => h.Type == "InstanceFaulted") == 2);
        var history = (await Api.HistoryAsync(instance.Id)).Select(h => h.Type).ToList();
        Assert.True(history.IndexOf("InstanceReplayed") < history.LastIndexOf("InstanceFaulted"));
        using var twice = await Api.Http.PostAsync($"/dead-letters/{Guid.NewGuid()}/replay", null);
        await ApiClient.ProblemAsync(twice, System.Net.HttpStatusCode.NotFound);
    }

    [Fact]
    public async Task Two_concurrent_replays_of_one_dead_letter_replay_it_once_and_the_other_is_told_409()
    {
        // Found by the fault runner (duplicates on PostgreSQL): the loser of two concurrent replays hit the history's
        // unique sequence and was answered 500, and the client's retry, coming after the signal had been dead-lettered
        // again, replayed it a second time.
        var name = await PublishFailingAfterItsWaitAsync("replay-race");
        var letters = await Task.WhenAll(Enumerable.Range(0, 8).Select(async _ =>
        {
            var instance = await Api.StartAsync(name);
            var signal = await Api.SignalAsync(instance.Id, "go");
            await Api.WaitForAsync(instance.Id, InstanceStatus.Faulted);
            return (Instance: instance.Id, Signal: signal.Id);
        }));

        var answers = await Task.WhenAll(letters.Select(async letter =>
        {
            var calls = await Task.WhenAll(Enumerable.Range(0, 2).Select(_ => Api.Http.PostAsync($"/dead-letters/{letter.Signal}/replay", null)));
            var statuses = calls.Select(c => c.StatusCode).ToList();
            foreach (var call in calls)
            {
                call.Dispose();
            }

            return (letter.Instance, Statuses: statuses);
        }));

        Assert.All(answers, a => Assert.All(a.Statuses, s => Assert.Contains(s, new[] { System.Net.HttpStatusCode.Accepted, System.Net.HttpStatusCode.Conflict })));
        // Each 202 is one replay in the instance's history; of two calls at once, one was told the signal was already replayed.
        foreach (var (instance, statuses) in answers)
        {
            var replays = (await Api.HistoryAsync(instance)).Count(h => h.Type == "InstanceReplayed");
            Assert.Equal(statuses.Count(s => s == System.Net.HttpStatusCode.Accepted), replays);
        }

        Assert.Contains(answers, a => a.Statuses.Contains(System.Net.HttpStatusCode.Conflict));
    }

    [Fact]
    public async Task A_replay_repeated_with_its_Idempotency_Key_is_the_same_replay_even_after_the_signal_failed_again()
    {
        // Found by the fault runner (ambiguous commits): a replay committed whose answer was lost was retried with its key
        // and told 409, or, once the signal had failed into the dead letters again, replayed a second time.
        var name = await PublishFailingAfterItsWaitAsync("replay-key");
        var instance = await Api.StartAsync(name);
        var signal = await Api.SignalAsync(instance.Id, "go");
        await Api.WaitForAsync(instance.Id, InstanceStatus.Faulted);

        // Sent twice at once with one key: one replay, and both are told it was replayed.
        var first = await Task.WhenAll(Enumerable.Range(0, 2).Select(_ => ReplayAsync(signal.Id, "replay-1")));
        Assert.All(first, s => Assert.Equal(System.Net.HttpStatusCode.Accepted, s));

        // The replayed signal fails again, all the way into the dead letters; the first request, repeated, changes nothing.
        await Eventually.WaitUntilAsync(async () => (await Api.HistoryAsync(instance.Id)).Count(e => e.Type == "InstanceFaulted") == 2,
            what: "the replayed signal failed into the dead letters again");
        Assert.Equal(System.Net.HttpStatusCode.Accepted, await ReplayAsync(signal.Id, "replay-1"));
        Assert.Equal(1, (await Api.HistoryAsync(instance.Id)).Count(h => h.Type == "InstanceReplayed"));
        Assert.Equal(InstanceStatus.Faulted, (await Api.GetAsync(instance.Id)).Status);

        // A new key is a new replay.
        Assert.Equal(System.Net.HttpStatusCode.Accepted, await ReplayAsync(signal.Id, "replay-2"));
        Assert.Equal(2, (await Api.HistoryAsync(instance.Id)).Count(h => h.Type == "InstanceReplayed"));

        // A key the service cannot keep is refused before anything is replayed.
        using var tooLong = new HttpRequestMessage(HttpMethod.Post, $"/dead-letters/{signal.Id}/replay");
        tooLong.Headers.Add("Idempotency-Key", new string('k', 201));
        using var refused = await Api.Http.SendAsync(tooLong);
        var problem = await ApiClient.ProblemAsync(refused, System.Net.HttpStatusCode.BadRequest);
        Assert.Contains("Idempotency-Key", problem.ToJsonString(), StringComparison.Ordinal);
    }

    /// <summary>A definition whose step after its wait for "go" always fails: "go" ends in the dead letters.</summary>
    private async Task<string> PublishFailingAfterItsWaitAsync(string prefix)
    {
        var name = Definitions.Unique(prefix);
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "wait", "type": "waitForSignal", "signal": "go" },
                { "id": "boom", "type": "assign", "set": { "x": "noSuchFunction()" } },
                { "id": "done", "type": "complete" }
              ]
            }
            """);
        return name;
    }

    private async Task<System.Net.HttpStatusCode> ReplayAsync(Guid signal, string key)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, $"/dead-letters/{signal}/replay");
        request.Headers.Add("Idempotency-Key", key);
        using var response = await Api.Http.SendAsync(request);
        return response.StatusCode;
    }

    [Fact]
    public async Task A_human_task_is_claimed_and_completed_and_the_instance_resumes_with_its_result()
    {
        var name = Definitions.Unique("task");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "review", "type": "humanTask", "title": "Review", "role": "underwriter", "assignee": "input.owner", "data": "({ sum: input.sum })", "output": "review" },
                { "id": "done", "type": "complete", "result": "vars.review" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name, new { owner = "ana", sum = 5 });
        var inbox = await Api.Http.GetFromJsonAsync<PageView<TaskView>>($"/tasks?role=underwriter&status=Open&instanceId={instance.Id}", WorkflowServiceFactory.Json);
        var task = Assert.Single(inbox!.Items);
        Assert.Equal("ana", task.Assignee);
        Assert.Equal(5, task.Data!.Value.GetProperty("sum").GetInt32());

        using (var claim = await Api.Http.PostAsJsonAsync($"/tasks/{task.Id}/claim", new { user = "ana" }))
        {
            Assert.Equal(System.Net.HttpStatusCode.OK, claim.StatusCode);
        }

        using (var stolen = await Api.Http.PostAsJsonAsync($"/tasks/{task.Id}/claim", new { user = "bob" }))
        {
            await ApiClient.ProblemAsync(stolen, System.Net.HttpStatusCode.Conflict);
        }

        using (var wrong = await Api.Http.PostAsJsonAsync($"/tasks/{task.Id}/complete", new { user = "bob", result = new { approved = false } }))
        {
            await ApiClient.ProblemAsync(wrong, System.Net.HttpStatusCode.Conflict);
        }

        using (var complete = await Api.Http.PostAsJsonAsync($"/tasks/{task.Id}/complete", new { user = "ana", result = new { approved = true } }))
        {
            Assert.Equal(System.Net.HttpStatusCode.OK, complete.StatusCode);
        }

        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        Assert.True(done.Output!.Value.GetProperty("approved").GetBoolean());
        var mine = await Api.Http.GetFromJsonAsync<PageView<TaskView>>($"/tasks?assignee=ana&status=Completed&instanceId={instance.Id}", WorkflowServiceFactory.Json);
        Assert.Single(mine!.Items);
        using var late = await Api.Http.PostAsJsonAsync($"/tasks/{task.Id}/complete", new { user = "ana" });
        await ApiClient.ProblemAsync(late, System.Net.HttpStatusCode.Conflict);
    }

    [Fact]
    public async Task Cancelling_closes_the_open_task_and_the_pending_timer()
    {
        var name = Definitions.Unique("cancel");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "wait", "type": "waitForSignal", "signal": "go", "timeout": "PT1H", "onTimeout": "late" },
                { "id": "done", "type": "complete" },
                { "id": "late", "type": "fail", "reason": "'too late'" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);
        using var cancel = await Api.Http.PostAsJsonAsync($"/instances/{instance.Id}/cancel", new { reason = "withdrawn" });
        var cancelled = await cancel.Content.ReadFromJsonAsync<InstanceView>(WorkflowServiceFactory.Json);

        Assert.Equal(InstanceStatus.Cancelled, cancelled!.Status);
        var timer = Assert.Single(await Api.SignalsAsync(instance.Id));
        Assert.Equal(SignalStatus.Cancelled, timer.Status);
    }

    [Fact]
    public async Task A_failing_step_with_an_error_path_continues_there_without_retries()
    {
        var name = Definitions.Unique("catch");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "risky", "type": "assign", "set": { "x": "noSuchFunction()" }, "onError": "recover", "errorOutput": "problem" },
                { "id": "done", "type": "complete", "result": "'ok'" },
                { "id": "recover", "type": "complete", "result": "({ recovered: vars.problem.step, why: vars.problem.message })" }
              ]
            }
            """);

        var instance = await Api.StartAsync(name);

        Assert.Equal(InstanceStatus.Completed, instance.Status);
        Assert.Equal("risky", instance.Output!.Value.GetProperty("recovered").GetString());
        Assert.Contains("noSuchFunction", instance.Output!.Value.GetProperty("why").GetString(), StringComparison.Ordinal);
        Assert.Contains(await Api.HistoryAsync(instance.Id), h => h.Type == "StepFailed" && h.StepId == "risky");
        Assert.Empty((await Api.SignalsAsync(instance.Id)));
    }

    [Fact]
    public async Task A_suspended_instance_keeps_what_it_receives_and_applies_it_when_resumed()
    {
        var name = Definitions.Unique("suspend");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await Api.StartAsync(name);

        using (var suspend = await Api.Http.PostAsJsonAsync($"/instances/{instance.Id}/suspend", new { reason = "audit" }))
        {
            Assert.Equal(System.Net.HttpStatusCode.OK, suspend.StatusCode);
        }

        await Api.SignalAsync(instance.Id, "go", new { value = 8 });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).ParkedSignals == 1);
        Assert.Equal(InstanceStatus.Suspended, (await Api.GetAsync(instance.Id)).Status);

        using (var resume = await Api.Http.PostAsync($"/instances/{instance.Id}/resume", null))
        {
            Assert.Equal(System.Net.HttpStatusCode.OK, resume.StatusCode);
        }

        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        Assert.Equal(8, done.Output!.Value.GetProperty("result").GetInt32());
        using var again = await Api.Http.PostAsync($"/instances/{instance.Id}/resume", null);
        await ApiClient.ProblemAsync(again, System.Net.HttpStatusCode.Conflict);
    }

    [Fact]
    public async Task Cancel_runs_the_cancel_path_and_terminate_does_not()
    {
        var name = Definitions.Unique("compensate");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "onCancel": "undo",
              "steps": [
                { "id": "wait", "type": "waitForSignal", "signal": "go" },
                { "id": "done", "type": "complete" },
                { "id": "undo", "type": "assign", "set": { "refund": "true" } },
                { "id": "undone", "type": "complete", "result": "({ refunded: vars.refund })" }
              ]
            }
            """);
        var cancelled = await Api.StartAsync(name);
        var terminated = await Api.StartAsync(name);

        using var cancel = await Api.Http.PostAsJsonAsync($"/instances/{cancelled.Id}/cancel", new { reason = "customer withdrew" });
        using var terminate = await Api.Http.PostAsJsonAsync($"/instances/{terminated.Id}/terminate", new { reason = "operator" });

        var afterCancel = (await cancel.Content.ReadFromJsonAsync<InstanceView>(WorkflowServiceFactory.Json))!;
        Assert.Equal(InstanceStatus.Cancelled, afterCancel.Status);
        Assert.True(afterCancel.Output!.Value.GetProperty("refunded").GetBoolean());
        Assert.Contains(await Api.HistoryAsync(cancelled.Id), h => h.Type == "CancelPathStarted");
        var afterTerminate = (await terminate.Content.ReadFromJsonAsync<InstanceView>(WorkflowServiceFactory.Json))!;
        Assert.Equal(InstanceStatus.Cancelled, afterTerminate.Status);
        Assert.Null(afterTerminate.Output);
        Assert.DoesNotContain(await Api.HistoryAsync(terminated.Id), h => h.Type == "CancelPathStarted");
    }

    [Fact]
    public async Task A_cancel_path_that_waits_is_refused_at_publish()
    {
        var json = $$"""
            {
              "name": "{{Definitions.Unique("badcancel")}}",
              "onCancel": "ask",
              "steps": [
                { "id": "wait", "type": "waitForSignal", "signal": "go" },
                { "id": "done", "type": "complete" },
                { "id": "ask", "type": "humanTask", "title": "Confirm the cancel", "next": "done" }
              ]
            }
            """;
        using var response = await Api.Http.PostAsync("/definitions", new StringContent(json, System.Text.Encoding.UTF8, "application/json"));

        var problem = await ApiClient.ProblemAsync(response, System.Net.HttpStatusCode.UnprocessableEntity);
        Assert.Contains("$.steps[2]", problem["diagnostics"]!.ToJsonString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task An_http_step_calls_out_and_its_response_lands_in_a_variable()
    {
        await using var target = await CallOutTarget.StartAsync();
        var name = Definitions.Unique("callout");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "price", "type": "http", "method": "POST", "url": "'{{target.Address}}quote'",
                  "body": "({ sum: input.sum })", "headers": { "X-Currency": "'EUR'" }, "timeout": "PT5S", "output": "quote" },
                { "id": "done", "type": "complete", "result": "({ status: vars.quote.status, premium: vars.quote.body.premium, currency: vars.quote.body.currency })" }
              ]
            }
            """);

        var instance = await Api.StartAsync(name, new { sum = 12_300 });
        Assert.Equal(WaitKind.CallOut, instance.Wait!.Kind);
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal(200, done.Output!.Value.GetProperty("status").GetInt32());
        Assert.Equal(123, done.Output!.Value.GetProperty("premium").GetInt32());
        Assert.Equal("EUR", done.Output!.Value.GetProperty("currency").GetString());
        Assert.Contains(await Api.HistoryAsync(instance.Id), h => h.Type == "CallOutCompleted");
    }

    [Fact]
    public async Task An_http_step_retries_a_failing_service_within_its_bound()
    {
        await using var target = await CallOutTarget.StartAsync();
        var name = Definitions.Unique("flaky");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "ping", "type": "http", "method": "GET", "url": "'{{target.Address}}flaky'", "retries": 3, "output": "reply" },
                { "id": "done", "type": "complete", "result": "vars.reply.body" }
              ]
            }
            """);

        var instance = await Api.StartAsync(name);
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal("ready", done.Output!.Value.GetString());
        Assert.Equal(3, target.FlakyCalls);
    }

    [Fact]
    public async Task An_http_step_that_keeps_failing_takes_its_error_path()
    {
        await using var target = await CallOutTarget.StartAsync();
        var name = Definitions.Unique("broken");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "call", "type": "http", "method": "GET", "url": "'{{target.Address}}broken'", "retries": 1,
                  "onError": "fallback", "errorOutput": "failure" },
                { "id": "done", "type": "complete", "result": "'called'" },
                { "id": "fallback", "type": "complete", "result": "vars.failure.message" }
              ]
            }
            """);

        var instance = await Api.StartAsync(name);
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Contains("500", done.Output!.Value.GetString(), StringComparison.Ordinal);
        Assert.Contains(await Api.HistoryAsync(instance.Id), h => h.Type == "StepFailed" && h.StepId == "call");
    }

    [Fact]
    public async Task A_sub_workflow_runs_as_a_child_instance_and_the_parent_continues_with_its_result()
    {
        var child = Definitions.Unique("child");
        var parent = Definitions.Unique("parent");
        await Api.PublishAsync($$"""
            {
              "name": "{{child}}",
              "steps": [
                { "id": "wait-go", "type": "waitForSignal", "signal": "go", "output": "go" },
                { "id": "done", "type": "complete", "result": "({ doubled: input.n * 2, said: vars.go.word })" }
              ]
            }
            """);
        await Api.PublishAsync($$"""
            {
              "name": "{{parent}}",
              "steps": [
                { "id": "delegate", "type": "subWorkflow", "definition": "{{child}}", "input": "({ n: input.n })", "output": "child" },
                { "id": "done", "type": "complete", "result": "({ status: vars.child.status, doubled: vars.child.output.doubled, said: vars.child.output.said })" }
              ]
            }
            """);

        var started = await Api.StartAsync(parent, new { n = 21 });
        Assert.Equal(WaitKind.SubWorkflow, started.Wait!.Kind);
        InstanceSummaryView? childInstance = null;
        await Eventually.WaitUntilAsync(async () =>
        {
            var page = await Api.Http.GetFromJsonAsync<PageView<InstanceSummaryView>>($"/instances?definition={child}", WorkflowServiceFactory.Json);
            childInstance = page!.Items.SingleOrDefault();
            return childInstance is { Status: InstanceStatus.Waiting };
        });
        await Api.SignalAsync(childInstance!.Id, "go", new { word = "hello" });

        var done = await Api.WaitForAsync(started.Id, InstanceStatus.Completed);
        Assert.Equal("Completed", done.Output!.Value.GetProperty("status").GetString());
        Assert.Equal(42, done.Output!.Value.GetProperty("doubled").GetInt32());
        Assert.Equal("hello", done.Output!.Value.GetProperty("said").GetString());
        var history = (await Api.HistoryAsync(started.Id)).Select(h => h.Type).ToList();
        Assert.Contains("SubWorkflowStarted", history);
        Assert.Contains("SubWorkflowEnded", history);
    }

    [Fact]
    public async Task A_claim_left_by_a_dead_worker_expires_and_another_worker_takes_the_signal_over()
    {
        var name = Definitions.Unique("lease");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await Api.StartAsync(name);
        var queue = Factory.Get<ISignalQueue>();
        var clock = Factory.Get<IStoreClock>();

        // A worker on another node claimed the signal and died: its lease runs out 300 ms from now.
        var now = clock.NowMs();
        var orphan = new SignalMessage
        {
            Id = Guid.CreateVersion7(),
            InstanceId = instance.Id,
            Name = "go",
            PayloadJson = """{"value":5}""",
            Status = SignalStatus.Pending,
            DueAtMs = now,
            Attempts = 1,
            LeaseOwner = "dead-node",
            LeaseToken = 12345,
            LeaseUntilMs = now + 300,
            CreatedAt = DateTime.UtcNow,
        };
        await queue.EnqueueSignalAsync(orphan, TestContext.Current.CancellationToken);

        await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        var handled = await queue.GetSignalAsync("", orphan.Id, TestContext.Current.CancellationToken);
        Assert.Equal(SignalStatus.Handled, handled!.Status);
        Assert.Equal(2, handled.Attempts);
    }
}

public sealed class SqliteEngineSemanticsTests : EngineSemanticsTests<SqliteBackend>;

public sealed class PostgresEngineSemanticsTests : EngineSemanticsTests<PostgresBackend>;

public sealed class MongoDbEngineSemanticsTests : EngineSemanticsTests<MongoDbBackend>;
