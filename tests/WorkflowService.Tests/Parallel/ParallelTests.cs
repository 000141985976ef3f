using System.Net;
using System.Net.Http.Json;
using System.Text;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Diagrams;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Parallel;

/// <summary>Parallel steps through the real HTTP pipeline, real signal workers and a real store.</summary>
public abstract class ParallelTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    protected override Dictionary<string, string?> Settings => new() { ["Engine:RetryBackoff"] = "00:00:00.010", ["Engine:MaxAttempts"] = "2" };

    /// <summary>Two branches, each waiting for its report; the step continues at "done" once both are in.</summary>
    private static string TwoReports(string name) => $$"""
        {
          "name": "{{name}}",
          "steps": [
            { "id": "gather", "type": "parallel", "branches": [
              { "name": "assessor", "steps": [
                { "id": "wait-assessor", "type": "waitForSignal", "signal": "assessor-report", "output": "assessor" } ] },
              { "name": "police", "steps": [
                { "id": "wait-police", "type": "waitForSignal", "signal": "police-report", "output": "police" } ] } ] },
            { "id": "done", "type": "complete", "result": "({ damage: vars.assessor.damage, atFault: vars.police.atFault })" }
          ]
        }
        """;

    [Theory]
    [InlineData("assessor-report", "police-report")]
    [InlineData("police-report", "assessor-report")]
    public async Task Both_branches_wait_for_their_signals_in_either_order_and_the_join_continues_only_after_the_last(string first, string second)
    {
        var name = Definitions.Unique("parallel");
        await Api.PublishAsync(TwoReports(name));
        var instance = await Api.StartAsync(name);
        Assert.Equal(WaitKind.Parallel, instance.Wait!.Kind);
        Assert.Equal("gather", instance.Wait.StepId);
        Assert.Equal([("assessor", "assessor-report"), ("police", "police-report")],
            instance.Wait.Branches!.Select(b => (b.Name, b.Signal!)));

        await Api.SignalAsync(instance.Id, first, new { damage = 1200, atFault = "other" });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).Wait!.Branches!.Count(b => b.Joined) == 1);
        var halfway = await Api.GetAsync(instance.Id);
        Assert.Equal(InstanceStatus.Waiting, halfway.Status);
        var waiting = Assert.Single(halfway.Wait!.Branches!, b => !b.Joined);
        Assert.Equal(second, waiting.Signal);

        await Api.SignalAsync(instance.Id, second, new { damage = 1200, atFault = "other" });
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal(1200, done.Output!.Value.GetProperty("damage").GetInt32());
        Assert.Equal("other", done.Output!.Value.GetProperty("atFault").GetString());
        var history = (await Api.HistoryAsync(instance.Id)).Select(h => h.Type).ToList();
        Assert.Equal(2, history.Count(t => t == "BranchJoined"));
        Assert.True(history.LastIndexOf("BranchJoined") < history.IndexOf("ParallelJoined"));
        Assert.True(history.IndexOf("ParallelJoined") < history.IndexOf("InstanceCompleted"));
    }

    [Fact]
    public async Task A_signal_that_arrives_before_its_branch_waits_for_it_is_parked_and_consumed_when_the_branch_gets_there()
    {
        var name = Definitions.Unique("parallel-early");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "gather", "type": "parallel", "branches": [
                  { "name": "assessor", "steps": [
                    { "id": "wait-assessor", "type": "waitForSignal", "signal": "assessor-report", "output": "assessor" } ] },
                  { "name": "police", "steps": [
                    { "id": "wait-case-number", "type": "waitForSignal", "signal": "case-number" },
                    { "id": "wait-police", "type": "waitForSignal", "signal": "police-report", "output": "police" } ] } ] },
                { "id": "done", "type": "complete", "result": "vars.police" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);

        // The police branch still waits for its case number: the report is parked, not lost.
        await Api.SignalAsync(instance.Id, "police-report", new { report = 7 });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).ParkedSignals == 1);
        await Api.SignalAsync(instance.Id, "case-number");
        await Eventually.WaitUntilAsync(async () =>
            (await Api.GetAsync(instance.Id)).Wait!.Branches!.Single(b => b.Name == "police").Joined);
        Assert.Equal(0, (await Api.GetAsync(instance.Id)).ParkedSignals);
        await Api.SignalAsync(instance.Id, "assessor-report", new { damage = 1 });
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal(7, done.Output!.Value.GetProperty("report").GetInt32());
        Assert.Contains(await Api.HistoryAsync(instance.Id), h => h.Type == "SignalReceived" && h.StepId == "wait-police"
            && h.Data!.Value.TryGetProperty("early", out var early) && early.GetBoolean());
        Assert.All(await Api.SignalsAsync(instance.Id), s => Assert.Equal(SignalStatus.Handled, s.Status));
    }

    [Fact]
    public async Task Signals_sent_before_the_parallel_step_is_reached_are_consumed_as_its_branches_start()
    {
        var name = Definitions.Unique("parallel-before");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "wait-go", "type": "waitForSignal", "signal": "go" },
                { "id": "gather", "type": "parallel", "branches": [
                  { "name": "assessor", "steps": [ { "id": "wait-assessor", "type": "waitForSignal", "signal": "assessor-report", "output": "assessor" } ] },
                  { "name": "police", "steps": [ { "id": "wait-police", "type": "waitForSignal", "signal": "police-report", "output": "police" } ] } ] },
                { "id": "done", "type": "complete", "result": "({ damage: vars.assessor.damage, atFault: vars.police.atFault })" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);
        await Api.SignalAsync(instance.Id, "police-report", new { atFault = "nobody" });
        await Api.SignalAsync(instance.Id, "assessor-report", new { damage = 300 });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).ParkedSignals == 2);

        await Api.SignalAsync(instance.Id, "go");
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal(300, done.Output!.Value.GetProperty("damage").GetInt32());
        Assert.Equal("nobody", done.Output!.Value.GetProperty("atFault").GetString());
    }

    [Fact]
    public async Task A_human_task_in_a_branch_is_listed_in_its_branch_and_completing_it_joins_the_branch()
    {
        var name = Definitions.Unique("parallel-task");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "gather", "type": "parallel", "branches": [
                  { "name": "desk", "steps": [
                    { "id": "assess", "type": "humanTask", "title": "Assess the damage", "role": "claims-desk", "data": "({ claim: input.claim })", "output": "assessment" } ] },
                  { "name": "police", "steps": [ { "id": "wait-police", "type": "waitForSignal", "signal": "police-report", "output": "police" } ] } ] },
                { "id": "done", "type": "complete", "result": "({ damage: vars.assessment.damage, atFault: vars.police.atFault })" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name, new { claim = "C-1" });
        var task = Assert.Single((await Api.Http.GetFromJsonAsync<PageView<TaskView>>($"/tasks?instanceId={instance.Id}", WorkflowServiceFactory.Json))!.Items);
        Assert.Equal(("assess", "C-1"), (task.StepId, task.Data!.Value.GetProperty("claim").GetString()));
        Assert.Equal(task.Id, instance.Wait!.Branches!.Single(b => b.Name == "desk").TaskId);

        using (var complete = await Api.Http.PostAsJsonAsync($"/tasks/{task.Id}/complete", new { user = "ana", result = new { damage = 900 } }))
        {
            Assert.Equal(HttpStatusCode.OK, complete.StatusCode);
        }

        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).Wait!.Branches!.Single(b => b.Name == "desk").Joined);
        Assert.Equal(InstanceStatus.Waiting, (await Api.GetAsync(instance.Id)).Status);
        await Api.SignalAsync(instance.Id, "police-report", new { atFault = "other" });
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal(900, done.Output!.Value.GetProperty("damage").GetInt32());
    }

    [Fact]
    public async Task A_branch_that_fails_ends_the_instance_and_closes_the_other_branches_task_and_timer()
    {
        var name = Definitions.Unique("parallel-fail");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "gather", "type": "parallel", "branches": [
                  { "name": "police", "steps": [
                    { "id": "wait-police", "type": "waitForSignal", "signal": "police-report", "output": "police", "timeout": "P30D", "onTimeout": "no-report" },
                    { "id": "check", "type": "decision", "branches": [ { "when": "vars.police.atFault === 'insured'", "next": "insured-at-fault" } ], "otherwise": "recorded" },
                    { "id": "insured-at-fault", "type": "fail", "reason": "'the insured caused the accident'" },
                    { "id": "no-report", "type": "fail", "reason": "'no police report'" },
                    { "id": "recorded", "type": "assign", "set": { "clear": "true" } } ] },
                  { "name": "desk", "steps": [ { "id": "assess", "type": "humanTask", "title": "Assess the damage" } ] } ] },
                { "id": "done", "type": "complete" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);
        var timer = instance.Wait!.Branches!.Single(b => b.Name == "police").TimerId;
        var task = instance.Wait.Branches!.Single(b => b.Name == "desk").TaskId;

        await Api.SignalAsync(instance.Id, "police-report", new { atFault = "insured" });
        var failed = await Api.WaitForAsync(instance.Id, InstanceStatus.Failed);

        Assert.Equal("the insured caused the accident", failed.Error);
        Assert.Null(failed.Wait);
        Assert.Equal(HumanTaskStatus.Cancelled, (await Api.Http.GetFromJsonAsync<TaskView>($"/tasks/{task}", WorkflowServiceFactory.Json))!.Status);
        Assert.Equal(SignalStatus.Cancelled, Assert.Single(await Api.SignalsAsync(instance.Id), s => s.Id == timer).Status);
        Assert.Contains(await Api.HistoryAsync(instance.Id), h => h.Type == "InstanceFailed" && h.StepId == "insured-at-fault");
    }

    [Fact]
    public async Task Cancelling_in_a_parallel_step_runs_the_cancel_path_and_closes_every_branchs_task_and_timer()
    {
        var name = Definitions.Unique("parallel-cancel");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "onCancel": "withdraw",
              "steps": [
                { "id": "gather", "type": "parallel", "branches": [
                  { "name": "desk", "steps": [ { "id": "assess", "type": "humanTask", "title": "Assess the damage" } ] },
                  { "name": "police", "steps": [ { "id": "wait-police", "type": "waitForSignal", "signal": "police-report", "timeout": "P30D", "onTimeout": "late" },
                                                { "id": "late", "type": "assign", "set": { "late": "true" } } ] },
                  { "name": "assessor", "steps": [ { "id": "wait-assessor", "type": "waitForSignal", "signal": "assessor-report" } ] } ] },
                { "id": "done", "type": "complete" },
                { "id": "withdraw", "type": "complete", "result": "({ withdrawn: true })" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);
        await Api.SignalAsync(instance.Id, "assessor-report");
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).Wait!.Branches!.Single(b => b.Name == "assessor").Joined);
        var task = instance.Wait!.Branches!.Single(b => b.Name == "desk").TaskId;
        var timer = instance.Wait.Branches!.Single(b => b.Name == "police").TimerId;

        using var cancel = await Api.Http.PostAsJsonAsync($"/instances/{instance.Id}/cancel", new { reason = "claim withdrawn" });
        var cancelled = (await cancel.Content.ReadFromJsonAsync<InstanceView>(WorkflowServiceFactory.Json))!;

        Assert.Equal(InstanceStatus.Cancelled, cancelled.Status);
        Assert.True(cancelled.Output!.Value.GetProperty("withdrawn").GetBoolean());
        Assert.Null(cancelled.Wait);
        Assert.Equal(HumanTaskStatus.Cancelled, (await Api.Http.GetFromJsonAsync<TaskView>($"/tasks/{task}", WorkflowServiceFactory.Json))!.Status);
        Assert.Equal(SignalStatus.Cancelled, Assert.Single(await Api.SignalsAsync(instance.Id), s => s.Id == timer).Status);
        Assert.Contains(await Api.HistoryAsync(instance.Id), h => h.Type == "CancelPathStarted");
    }

    [Fact]
    public async Task Terminating_in_a_parallel_step_closes_every_branchs_task()
    {
        var name = Definitions.Unique("parallel-terminate");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "gather", "type": "parallel", "branches": [
                  { "name": "a", "steps": [ { "id": "task-a", "type": "humanTask", "title": "A" } ] },
                  { "name": "b", "steps": [ { "id": "task-b", "type": "humanTask", "title": "B" } ] } ] },
                { "id": "done", "type": "complete" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);

        using var terminate = await Api.Http.PostAsJsonAsync($"/instances/{instance.Id}/terminate", new { reason = "operator" });
        Assert.Equal(HttpStatusCode.OK, terminate.StatusCode);

        var tasks = (await Api.Http.GetFromJsonAsync<PageView<TaskView>>($"/tasks?instanceId={instance.Id}", WorkflowServiceFactory.Json))!.Items;
        Assert.Equal(2, tasks.Count);
        Assert.All(tasks, t => Assert.Equal(HumanTaskStatus.Cancelled, t.Status));
    }

    [Fact]
    public async Task A_suspended_parallel_step_keeps_its_branches_signals_and_applies_them_when_resumed()
    {
        var name = Definitions.Unique("parallel-suspend");
        await Api.PublishAsync(TwoReports(name));
        var instance = await Api.StartAsync(name);
        using (var suspend = await Api.Http.PostAsJsonAsync($"/instances/{instance.Id}/suspend", new { reason = "audit" }))
        {
            Assert.Equal(HttpStatusCode.OK, suspend.StatusCode);
        }

        await Api.SignalAsync(instance.Id, "assessor-report", new { damage = 5 });
        await Api.SignalAsync(instance.Id, "police-report", new { atFault = "other" });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).ParkedSignals == 2);
        Assert.Equal(InstanceStatus.Suspended, (await Api.GetAsync(instance.Id)).Status);

        using (var resume = await Api.Http.PostAsync($"/instances/{instance.Id}/resume", null))
        {
            Assert.Equal(HttpStatusCode.OK, resume.StatusCode);
        }

        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        Assert.Equal(5, done.Output!.Value.GetProperty("damage").GetInt32());
    }

    [Fact]
    public async Task Branches_share_the_variables_and_the_last_writer_wins()
    {
        var name = Definitions.Unique("parallel-vars");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "variables": { "log": [] },
              "steps": [
                { "id": "gather", "type": "parallel", "branches": [
                  { "name": "a", "steps": [ { "id": "wait-a", "type": "waitForSignal", "signal": "a" },
                                            { "id": "set-a", "type": "assign", "set": { "winner": "'a'", "log": "[...vars.log, 'a']" } } ] },
                  { "name": "b", "steps": [ { "id": "wait-b", "type": "waitForSignal", "signal": "b" },
                                            { "id": "set-b", "type": "assign", "set": { "winner": "'b'", "log": "[...vars.log, 'b']" } } ] } ] },
                { "id": "done", "type": "complete", "result": "({ winner: vars.winner, log: vars.log })" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);

        await Api.SignalAsync(instance.Id, "b");
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).Wait!.Branches!.Single(b => b.Name == "b").Joined);
        await Api.SignalAsync(instance.Id, "a");
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal("a", done.Output!.Value.GetProperty("winner").GetString());
        Assert.Equal(["b", "a"], done.Output!.Value.GetProperty("log").EnumerateArray().Select(e => e.GetString()));
    }

    [Fact]
    public async Task An_http_step_and_a_sub_workflow_run_inside_branches()
    {
        await using var target = await CallOutTarget.StartAsync();
        var child = Definitions.Unique("parallel-child");
        var name = Definitions.Unique("parallel-callout");
        await Api.PublishAsync(Definitions.SignalRoundtrip(child));
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "gather", "type": "parallel", "branches": [
                  { "name": "price", "steps": [
                    { "id": "quote", "type": "http", "method": "POST", "url": "'{{target.Address}}quote'", "body": "({ sum: input.sum })", "output": "quote" } ] },
                  { "name": "sign", "steps": [
                    { "id": "signature", "type": "subWorkflow", "definition": "{{child}}", "output": "signed" } ] } ] },
                { "id": "done", "type": "complete", "result": "({ premium: vars.quote.body.premium, signed: vars.signed.status, said: vars.signed.output.result })" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name, new { sum = 12_300 });

        InstanceSummaryView? childInstance = null;
        await Eventually.WaitUntilAsync(async () =>
        {
            var page = await Api.Http.GetFromJsonAsync<PageView<InstanceSummaryView>>($"/instances?definition={child}", WorkflowServiceFactory.Json);
            childInstance = page!.Items.SingleOrDefault();
            return childInstance is { Status: InstanceStatus.Waiting };
        });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).Wait!.Branches!.Single(b => b.Name == "price").Joined);
        await Api.SignalAsync(childInstance!.Id, "go", new { value = "yes" });
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        Assert.Equal(123, done.Output!.Value.GetProperty("premium").GetInt32());
        Assert.Equal("Completed", done.Output!.Value.GetProperty("signed").GetString());
        Assert.Equal("yes", done.Output!.Value.GetProperty("said").GetString());
        var history = await Api.HistoryAsync(instance.Id);
        Assert.Contains(history, h => h.Type == "CallOutCompleted" && h.StepId == "quote");
        Assert.Contains(history, h => h.Type == "SubWorkflowStarted" && h.StepId == "signature");
    }

    [Fact]
    public async Task An_instance_diagram_marks_where_each_branch_is()
    {
        await Api.PublishExampleAsync("insurance-claim.json");
        var instance = await Api.StartAsync("insurance-claim", new { amount = 2000 });
        await Api.SignalAsync(instance.Id, "police-report", new { atFault = "other" });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).Wait!.Branches!.Single(b => b.Name == "police").Joined);

        var diagram = SvgDiagram.Parse(await Api.Http.GetStringAsync($"/instances/{instance.Id}/diagram.svg"));

        Assert.Equal("current", diagram.StepOf("gather-reports").State);
        Assert.Equal("current", diagram.StepOf("wait-assessor-report").State);
        Assert.Equal("completed", diagram.StepOf("wait-police-report").State);
        Assert.Equal("completed", diagram.StepOf("record-liability").State);
        Assert.Equal("not-reached", diagram.StepOf("desk-assessment").State);
        Assert.Equal("not-reached", diagram.StepOf("route").State);
        Assert.Equal("assessor", diagram.Document.Descendants(SvgDiagram.Svg + "g")
            .Single(g => (string?)g.Attribute("data-step") == "wait-assessor-report").Attribute("data-branch")!.Value);
        Assert.Empty(diagram.ReadabilityFaults(SvgDiagram.Compile(await File.ReadAllTextAsync(Path.Combine(AppContext.BaseDirectory, "examples", "insurance-claim.json")))));

        await Api.SignalAsync(instance.Id, "assessor-report", new { damage = 800 });
        await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        var completed = SvgDiagram.Parse(await Api.Http.GetStringAsync($"/instances/{instance.Id}/diagram.svg"));
        Assert.Equal("completed", completed.StepOf("gather-reports").State);
        Assert.Equal("completed", completed.StepOf("settle").State);
    }

    [Fact]
    public async Task An_instance_inside_a_parallel_step_migrates_branch_by_branch_and_completes_on_the_new_version()
    {
        var name = Definitions.Unique("parallel-migrate");
        await Api.PublishAsync(TwoReports(name));
        var instance = await Api.StartAsync(name);
        await Api.SignalAsync(instance.Id, "assessor-report", new { damage = 40 });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).Wait!.Branches!.Single(b => b.Name == "assessor").Joined);
        // Version 2 renames the police branch's wait and says which version completed.
        await Api.PublishAsync(TwoReports(name).Replace("wait-police", "await-police", StringComparison.Ordinal).Replace("atFault: vars.police.atFault", "version: 2", StringComparison.Ordinal));
        var stepMap = new Dictionary<string, string> { ["wait-police"] = "await-police" };

        using (var dry = await Api.Http.PostAsJsonAsync($"/instances/{instance.Id}/migrate", new { toVersion = 2, stepMap, dryRun = true }))
        {
            var preview = (await dry.Content.ReadFromJsonAsync<MigrationReport>(WorkflowServiceFactory.Json))!;
            Assert.Equal(("gather", "gather", true), (preview.Instances[0].FromStep, preview.Instances[0].ToStep, preview.Instances[0].Allowed));
        }

        using (var run = await Api.Http.PostAsJsonAsync($"/instances/{instance.Id}/migrate", new { toVersion = 2, stepMap, dryRun = false }))
        {
            Assert.Equal(1, (await run.Content.ReadFromJsonAsync<MigrationReport>(WorkflowServiceFactory.Json))!.Migrated);
        }

        var moved = await Api.GetAsync(instance.Id);
        Assert.Equal(2, moved.Version);
        Assert.Equal("await-police", moved.Wait!.Branches!.Single(b => b.Name == "police").StepId);
        await Api.SignalAsync(instance.Id, "police-report", new { atFault = "other" });
        var done = await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        Assert.Equal(2, done.Output!.Value.GetProperty("version").GetInt32());
        Assert.Equal(40, done.Output!.Value.GetProperty("damage").GetInt32());
    }

    [Fact]
    public async Task A_plan_that_would_strand_a_branch_or_drop_a_wait_into_a_branch_is_refused_and_moves_nothing()
    {
        var name = Definitions.Unique("parallel-strand");
        await Api.PublishAsync(TwoReports(name));
        var inParallel = await Api.StartAsync(name);
        // Version 2 has no police branch: the instance's police branch would be stranded.
        await Api.PublishAsync(TwoReports(name).Replace("\"name\": \"police\"", "\"name\": \"traffic-police\"", StringComparison.Ordinal));

        using (var response = await Api.Http.PostAsJsonAsync($"/instances/{inParallel.Id}/migrate", new { toVersion = 2, dryRun = false }))
        {
            var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.UnprocessableEntity);
            Assert.Contains("police", (string)problem["detail"]!, StringComparison.Ordinal);
            Assert.Contains("never started", (string)problem["detail"]!, StringComparison.Ordinal);
        }

        Assert.Equal(1, (await Api.GetAsync(inParallel.Id)).Version);

        // An instance waiting outside any parallel step cannot land on a step inside a branch.
        var plain = Definitions.Unique("parallel-into");
        await Api.PublishAsync(Definitions.SignalRoundtrip(plain));
        var waiting = await Api.StartAsync(plain);
        await Api.PublishAsync($$"""
            {
              "name": "{{plain}}",
              "steps": [
                { "id": "gather", "type": "parallel", "branches": [ { "name": "only", "steps": [ { "id": "wait-go", "type": "waitForSignal", "signal": "go" } ] } ] },
                { "id": "done", "type": "complete" }
              ]
            }
            """);
        using (var response = await Api.Http.PostAsJsonAsync($"/instances/{waiting.Id}/migrate", new { toVersion = 2, dryRun = true }))
        {
            var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.UnprocessableEntity);
            Assert.Contains("inside branch 'only' of parallel step 'gather'", (string)problem["detail"]!, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task An_invalid_parallel_step_is_refused_with_422_listing_every_problem_with_its_path()
    {
        var json = $$"""
            {
              "name": "{{Definitions.Unique("parallel-bad")}}",
              "steps": [
                { "id": "gather", "type": "parallel", "branches": [
                  { "name": "a", "steps": [ { "id": "a1", "type": "waitForSignal", "signal": "x", "next": "done" } ] },
                  { "name": "b", "steps": [ { "id": "b1", "type": "complete" } ] } ] },
                { "id": "done", "type": "complete" }
              ]
            }
            """;
        using var response = await Api.Http.PostAsync("/definitions", new StringContent(json, Encoding.UTF8, "application/json"));

        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.UnprocessableEntity);
        var paths = problem["diagnostics"]!.AsArray().Select(d => (string)d!["path"]!).ToList();
        Assert.Equal(["$.steps[0].branches[0].steps[0].next", "$.steps[0].branches[1].steps[0].type"], paths.Order());
    }
}

public sealed class SqliteParallelTests : ParallelTests<SqliteBackend>;

public sealed class PostgresParallelTests : ParallelTests<PostgresBackend>;

public sealed class MongoDbParallelTests : ParallelTests<MongoDbBackend>;
