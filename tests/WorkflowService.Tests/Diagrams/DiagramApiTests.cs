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
