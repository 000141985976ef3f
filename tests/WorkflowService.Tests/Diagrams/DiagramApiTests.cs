using System.Net.Http.Json;
using System.Net;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using ApiException = WorkflowService.Tests.Client.Generated.ApiException<WorkflowService.Tests.Client.Generated.ProblemDetails>;
using WorkflowServiceClient = WorkflowService.Tests.Client.Generated.WorkflowServiceClient;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Diagrams;

/// <summary>The diagram endpoints through the real pipeline, with instances driven through the API.</summary>
public abstract class DiagramApiTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    protected override Dictionary<string, string?> Settings => new() { ["Engine:RetryBackoff"] = "00:00:00.010", ["Engine:MaxAttempts"] = "2" };

    [Fact]
    public async Task A_definition_version_is_served_as_an_svg_diagram()
    {
        var name = Definitions.Unique("diagram");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        await Api.PublishAsync(Definitions.TwoWaits(name));

        var v1 = await DiagramAsync($"/definitions/{name}/versions/1/diagram.svg");
        var v2 = await DiagramAsync($"/definitions/{name}/versions/2/diagram.svg");

        Assert.Equal(["wait-go", "assign", "done"], v1.Steps.Select(s => s.Id));
        Assert.Equal(["wait-a", "wait-b", "done"], v2.Steps.Select(s => s.Id));
        Assert.All(v1.Steps, s => Assert.Null(s.State));
        Assert.Equal(name, (string?)v1.Document.Root!.Attribute("data-definition"));
    }

    [Fact]
    public async Task The_generated_client_downloads_both_diagrams()
    {
        var name = Definitions.Unique("diagram-client");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await Api.StartAsync(name);
        var client = new WorkflowServiceClient(Api.Http);

        using var definition = await client.GetDefinitionDiagramAsync(name, 1);
        using var diagram = await client.GetInstanceDiagramAsync(instance.Id);

        Assert.Equal(3, SvgDiagram.Parse(await new StreamReader(definition.Stream).ReadToEndAsync()).Steps.Count);
        Assert.Equal("current", SvgDiagram.Parse(await new StreamReader(diagram.Stream).ReadToEndAsync()).StepOf("wait-go").State);
        var missing = await Assert.ThrowsAsync<ApiException>(() => client.GetInstanceDiagramAsync(Guid.NewGuid()));
        Assert.Equal(404, missing.StatusCode);
    }

    [Fact]
    public async Task Unknown_definitions_versions_and_instances_are_404_problems()
    {
        var name = Definitions.Unique("diagram-missing");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));

        foreach (var path in new[]
                 {
                     $"/definitions/{name}-nope/versions/1/diagram.svg",
                     $"/definitions/{name}/versions/2/diagram.svg",
                     $"/definitions/{name}/versions/0/diagram.svg",
                     $"/instances/{Guid.NewGuid()}/diagram.svg",
                 })
        {
            using var response = await Api.Http.GetAsync(path);
            await ApiClient.ProblemAsync(response, HttpStatusCode.NotFound);
        }
    }

    [Fact]
    public async Task An_instance_diagram_marks_the_current_wait_then_every_completed_step()
    {
        var name = Definitions.Unique("diagram-roundtrip");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var instance = await Api.StartAsync(name);

        var waiting = await DiagramAsync($"/instances/{instance.Id}/diagram.svg");

        Assert.Equal("current", waiting.StepOf("wait-go").State);
        Assert.Equal("not-reached", waiting.StepOf("assign").State);
        Assert.Equal("not-reached", waiting.StepOf("done").State);
        Assert.Equal(instance.Id.ToString(), (string?)waiting.Document.Root!.Attribute("data-instance"));
        Assert.Equal("Waiting", (string?)waiting.Document.Root!.Attribute("data-status"));

        await Api.SignalAsync(instance.Id, "go", new { value = 42 });
        await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        var completed = await DiagramAsync($"/instances/{instance.Id}/diagram.svg");

        Assert.All(completed.Steps, s => Assert.Equal("completed", s.State));
        Assert.Equal("Completed", (string?)completed.Document.Root!.Attribute("data-status"));
    }

    [Fact]
    public async Task A_faulted_instance_diagram_marks_the_step_whose_expression_threw()
    {
        var name = Definitions.Unique("diagram-fault");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "wait-go", "type": "waitForSignal", "signal": "go", "output": "go" },
                { "id": "boom", "type": "assign", "set": { "x": "noSuchFunction()" } },
                { "id": "done", "type": "complete" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);
        await Api.SignalAsync(instance.Id, "go");
        await Api.WaitForAsync(instance.Id, InstanceStatus.Faulted);

        var faulted = await DiagramAsync($"/instances/{instance.Id}/diagram.svg");

        Assert.Equal("failed", faulted.StepOf("boom").State);
        // The failed run stored nothing: the instance resumes from its wait on replay.
        Assert.Equal("current", faulted.StepOf("wait-go").State);
        Assert.Equal("not-reached", faulted.StepOf("done").State);
    }

    [Fact]
    public async Task A_failed_instance_diagram_marks_its_fail_step()
    {
        await Api.PublishExampleAsync("insurance-quotation.json");
        var instance = await Api.StartAsync("insurance-quotation", new { sumInsured = -1 });
        await Api.WaitForAsync(instance.Id, InstanceStatus.Failed);

        var failed = await DiagramAsync($"/instances/{instance.Id}/diagram.svg");

        Assert.Equal("completed", failed.StepOf("check-input").State);
        Assert.Equal("failed", failed.StepOf("invalid-input").State);
        Assert.Equal("not-reached", failed.StepOf("price").State);
    }

    [Fact]
    public async Task An_instance_diagram_highlights_the_edges_the_instance_took_and_not_their_siblings()
    {
        await Api.PublishExampleAsync("insurance-quotation.json");
        // Below the review threshold: past the input check and the review, to the offer.
        var instance = await Api.StartAsync("insurance-quotation", new { sumInsured = 100000, riskClass = "low" });
        await Api.WaitForAsync(instance.Id, InstanceStatus.Waiting);

        var waiting = await DiagramAsync($"/instances/{instance.Id}/diagram.svg");

        Assert.True(Taken(waiting, "start", "", "check-input"));
        Assert.True(Taken(waiting, "otherwise", "check-input", "price"));
        Assert.False(Taken(waiting, "branch", "check-input", "invalid-input"));
        Assert.True(Taken(waiting, "next", "price", "needs-review"));
        Assert.True(Taken(waiting, "otherwise", "needs-review", "offer"));
        Assert.False(Taken(waiting, "branch", "needs-review", "underwriter-review"));
        // The offer waits: neither of its ways out is taken yet.
        Assert.False(Taken(waiting, "next", "offer", "issued"));
        Assert.False(Taken(waiting, "timeout", "offer", "expired"));
        Assert.Equal("taken", (string?)waiting.Document.Descendants(SvgDiagram.Svg + "path").Single(p => p.Attribute("data-legend") is not null).Attribute("data-legend"));

        await Api.SignalAsync(instance.Id, "customer-accepted");
        await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        var completed = await DiagramAsync($"/instances/{instance.Id}/diagram.svg");

        Assert.True(Taken(completed, "next", "offer", "issued"));
        Assert.False(Taken(completed, "timeout", "offer", "expired"));
        Assert.Equal(
            [">check-input", "check-input>price", "needs-review>offer", "offer>issued", "price>needs-review"],
            completed.Routes.Where(r => r.Classes.Contains("taken")).Select(r => $"{r.From}>{r.To}").Order(StringComparer.Ordinal));
    }

    [Fact]
    public async Task Of_several_branches_to_one_step_only_the_branch_that_held_is_highlighted()
    {
        var name = Definitions.Unique("diagram-branches");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "wait", "type": "waitForSignal", "signal": "go", "output": "go" },
                { "id": "route", "type": "decision",
                  "branches": [ { "when": "vars.go.n === 1", "next": "done" }, { "when": "vars.go.n === 2", "next": "done" } ],
                  "otherwise": "done" },
                { "id": "done", "type": "complete" }
              ]
            }
            """);
        var instance = await Api.StartAsync(name);
        await Api.SignalAsync(instance.Id, "go", new { n = 2 });
        await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        var diagram = await DiagramAsync($"/instances/{instance.Id}/diagram.svg");

        var fromRoute = diagram.Routes.Where(r => r.From == "route").ToList();
        Assert.Equal(3, fromRoute.Count);
        var taken = Assert.Single(fromRoute, r => r.Classes.Contains("taken"));
        Assert.Equal("2: vars.go.n === 2", Assert.Single(diagram.Labels, l => l.Edge == taken.Index).Text);
    }

    [Fact]
    public async Task A_cancelled_instance_diagram_highlights_the_way_from_its_waits_into_the_cancel_path()
    {
        await Api.PublishExampleAsync("insurance-claim.json");
        var instance = await Api.StartAsync("insurance-claim", new { amount = 1800 });
        await Api.SignalAsync(instance.Id, "police-report", new { atFault = "other" });
        await Eventually.WaitUntilAsync(async () => (await Api.GetAsync(instance.Id)).Wait!.Branches!.Count(b => b.Joined) == 1);
        using (var cancel = await Api.Http.PostAsJsonAsync($"/instances/{instance.Id}/cancel", new { reason = "withdrawn by the customer" }))
        {
            Assert.Equal(HttpStatusCode.OK, cancel.StatusCode);
        }

        await Api.WaitForAsync(instance.Id, InstanceStatus.Cancelled);
        var diagram = await DiagramAsync($"/instances/{instance.Id}/diagram.svg");

        Assert.True(Taken(diagram, "fork", "gather-reports", "wait-police-report"));
        Assert.True(Taken(diagram, "next", "wait-police-report", "record-liability"));
        Assert.True(Taken(diagram, "join", "record-liability", "gather-reports.join"));
        Assert.False(Taken(diagram, "timeout", "wait-police-report", "police-report-missing"));
        // The assessor's branch still waited when the cancel came: the cancel left from there.
        Assert.True(Taken(diagram, "interrupt", "wait-assessor-report", ""));
        Assert.False(Taken(diagram, "interrupt", "wait-police-report", ""));
        Assert.False(Taken(diagram, "interrupt", "claims-review", ""));
        Assert.True(Taken(diagram, "cancel", "", "withdrawn"));
        Assert.False(Taken(diagram, "next", "gather-reports.join", "route"));
        Assert.Equal("completed", diagram.StepOf("withdrawn").State);
    }

    private static bool Taken(SvgDiagram diagram, string kind, string from, string to) =>
        Assert.Single(diagram.Routes, r => r.Kind == kind && r.From == from && r.To == to).Classes.Contains("taken");

    private async Task<SvgDiagram> DiagramAsync(string path)
    {
        using var response = await Api.Http.GetAsync(path);
        var body = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{path}: {(int)response.StatusCode} {body}");
        Assert.Equal("image/svg+xml", response.Content.Headers.ContentType?.MediaType);
        return SvgDiagram.Parse(body);
    }
}

public sealed class SqliteDiagramApiTests : DiagramApiTests<SqliteBackend>;

public sealed class PostgresDiagramApiTests : DiagramApiTests<PostgresBackend>;

public sealed class MongoDbDiagramApiTests : DiagramApiTests<MongoDbBackend>;

/// <summary>
/// docs/examples/*.svg are the diagrams the service draws for docs/examples/*.json. Refresh them with
/// <c>UPDATE_EXAMPLE_DIAGRAMS=1 dotnet test --project tests/WorkflowService.Tests --filter-class WorkflowService.Tests.Diagrams.ExampleDiagramTests</c>
/// from the repository root (or with the whole <c>dotnet test</c>).
/// </summary>
public sealed class ExampleDiagramTests : ServiceTest<SqliteBackend>
{
    public const string UpdateVariable = "UPDATE_EXAMPLE_DIAGRAMS";

    [Fact]
    public async Task The_committed_example_diagrams_are_what_the_service_draws()
    {
        var examples = Repository.Path("docs", "examples");
        var update = Environment.GetEnvironmentVariable(UpdateVariable) is "1" or "true";
        var stale = new List<string>();
        foreach (var json in Directory.GetFiles(examples, "*.json").Order())
        {
            var published = await Api.PublishAsync(await File.ReadAllTextAsync(json));
            var svg = await Api.Http.GetStringAsync($"/definitions/{published.Name}/versions/{published.Version}/diagram.svg");
            var committed = Path.ChangeExtension(json, ".svg");
            if (File.Exists(committed) && (await File.ReadAllTextAsync(committed)).ReplaceLineEndings("\n") == svg)
            {
                continue;
            }

            if (update)
            {
                await File.WriteAllTextAsync(committed, svg);
            }
            else
            {
                stale.Add(Path.GetFileName(committed));
            }
        }

        Assert.True(stale.Count == 0,
            $"{string.Join(", ", stale)} in docs/examples differ from what the service draws. Refresh them with " +
            $"`{UpdateVariable}=1 dotnet test --project tests/WorkflowService.Tests --filter-class {typeof(ExampleDiagramTests).FullName}` " +
            "from the repository root, look at them and commit them.");
    }
}
