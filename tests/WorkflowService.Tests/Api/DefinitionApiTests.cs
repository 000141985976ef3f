using System.Net;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json.Nodes;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Api;

public abstract class DefinitionApiTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{

    [Fact]
    public async Task Publishing_the_same_name_again_makes_a_new_version_and_both_can_be_read_back()
    {
        var name = Definitions.Unique("versions");
        var v1 = await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var v2 = await Api.PublishAsync(Definitions.TwoWaits(name));

        Assert.Equal(1, v1.Version);
        Assert.Equal(2, v2.Version);
        var versions = await Api.Http.GetFromJsonAsync<PageView<DefinitionView>>($"/definitions/{name}", WorkflowServiceFactory.Json);
        Assert.Equal([1, 2], versions!.Items.Select(v => v.Version));
        Assert.Equal(2, versions.Total);
        Assert.Null(versions.Next);
        var one = await Api.Http.GetFromJsonAsync<DefinitionView>($"/definitions/{name}/versions/1", WorkflowServiceFactory.Json);
        Assert.Equal("wait-go", one!.Definition.GetProperty("steps")[0].GetProperty("id").GetString());
        var list = await Api.Http.GetFromJsonAsync<List<DefinitionSummaryView>>("/definitions", WorkflowServiceFactory.Json);
        Assert.Contains(list!, d => d.Name == name && d.LatestVersion == 2);
    }

    [Fact]
    public async Task Running_instances_stay_on_their_version_when_a_new_one_is_published()
    {
        var name = Definitions.Unique("stay");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var onV1 = await Api.StartAsync(name);
        await Api.PublishAsync(Definitions.TwoWaits(name));
        var onV2 = await Api.StartAsync(name);

        Assert.Equal(1, onV1.Version);
        Assert.Equal(2, onV2.Version);
        await Api.SignalAsync(onV1.Id, "go", new { value = 1 });
        var done = await Api.WaitForAsync(onV1.Id, InstanceStatus.Completed);
        Assert.Equal(1, done.Output!.Value.GetProperty("result").GetInt32());
    }

    [Fact]
    public async Task An_invalid_definition_is_refused_with_every_problem_and_its_path_and_nothing_is_stored()
    {
        var name = Definitions.Unique("invalid");
        var json = $$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "a", "type": "assign", "set": { "x": "1 +" } },
                { "id": "a", "type": "teleport" },
                { "id": "w", "type": "waitForSignal", "timeout": "soon", "next": "nowhere" },
                { "id": "d", "type": "decision", "branches": [ { "when": "true" } ] }
              ]
            }
            """;
        using var response = await Api.Http.PostAsync("/definitions", new StringContent(json, Encoding.UTF8, "application/json"));

        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.UnprocessableEntity);
        var paths = problem["diagnostics"]!.AsArray().Select(d => (string)d!["path"]!).ToList();
        Assert.Contains("$.steps[0].set.x", paths);
        Assert.Contains("$.steps[1].id", paths);
        Assert.Contains("$.steps[1].type", paths);
        Assert.Contains("$.steps[2].signal", paths);
        Assert.Contains("$.steps[2].timeout", paths);
        Assert.Contains("$.steps[2].next", paths);
        Assert.Contains("$.steps[2].onTimeout", paths);
        Assert.Contains("$.steps[3].branches[0].next", paths);
        using var lookup = await Api.Http.GetAsync($"/definitions/{name}");
        await ApiClient.ProblemAsync(lookup, HttpStatusCode.NotFound);
    }

    [Theory]
    [InlineData("""{ "id": "c", "type": "complete", "reslt": "1" }""", "$.steps[2].reslt",
        "unknown field 'reslt' at $.steps[2]; a complete step takes: id, type, description, onError, errorOutput, result")]
    [InlineData("""{ "id": "c", "type": "complete", "result": 42 }""", "$.steps[2].result", "expected a string")]
    [InlineData("""{ "id": "c", "type": "http", "url": "'https://example.com'", "retries": "two" }""", "$.steps[2].retries",
        "expected a whole number from")]
    [InlineData("""{ "id": "c", "type": "assign", "set": { "x": true } }""", "$.steps[2].set.x", "expected a string")]
    [InlineData("""{ "id": "c", "type": "decision", "branches": { "when": "true" } }""", "$.steps[2].branches",
        "expected a JSON array whose every item is a branch: a JSON object with when and next (of a decision step) or name and steps (of a parallel step)")]
    public async Task A_misspelt_field_or_a_value_of_the_wrong_kind_is_reported_in_the_definitions_terms(string step, string path, string message)
    {
        var json = $$"""{ "name": "typo", "steps": [ { "id": "a", "type": "assign", "set": { "n": "1" } }, { "id": "b", "type": "complete" }, {{step}} ] }""";
        using var response = await Api.Http.PostAsync("/definitions", new StringContent(json, Encoding.UTF8, "application/json"));

        var body = await response.Content.ReadAsStringAsync();
        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.UnprocessableEntity);
        var diagnostic = Assert.Single(problem["diagnostics"]!.AsArray())!;
        Assert.Equal(path, (string)diagnostic["path"]!);
        Assert.StartsWith(message, (string)diagnostic["message"]!, StringComparison.Ordinal);
        ClientTerms.AssertNoDotNetNames(body);
    }

    [Fact]
    public async Task A_fail_step_with_error_instead_of_reason_is_refused_with_the_fields_a_fail_step_takes()
    {
        // Issue #37: the answer named the engine's step type and listed the fields of every step type.
        const string json = """
            { "name": "issue-37", "steps": [ { "id": "a", "type": "assign", "set": { "n": "1" } }, { "id": "b", "type": "fail", "error": "'out of stock'" } ] }
            """;
        using var response = await Api.Http.PostAsync("/definitions", new StringContent(json, Encoding.UTF8, "application/json"));

        var body = await response.Content.ReadAsStringAsync();
        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.UnprocessableEntity);
        var diagnostic = Assert.Single(problem["diagnostics"]!.AsArray())!;
        Assert.Equal("$.steps[1].error", (string)diagnostic["path"]!);
        Assert.Equal("unknown field 'error' at $.steps[1]; a fail step takes: id, type, description, onError, errorOutput, reason",
            (string)diagnostic["message"]!);
        ClientTerms.AssertNoDotNetNames(body);
        Assert.DoesNotContain("StepDocument", body, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Malformed_json_is_a_bad_request_that_says_why()
    {
        using var response = await Api.Http.PostAsync("/definitions", new StringContent("{ \"name\": ", Encoding.UTF8, "application/json"));

        var body = await response.Content.ReadAsStringAsync();
        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.BadRequest);
        Assert.Contains("The request body is not valid JSON at $", (string)problem["detail"]!, StringComparison.Ordinal);
        ClientTerms.AssertNoDotNetNames(body);
    }

    [Fact]
    public async Task Every_example_definition_publishes()
    {
        var examples = Directory.GetFiles(Path.Combine(AppContext.BaseDirectory, "examples"), "*.json");
        Assert.NotEmpty(examples);
        foreach (var file in examples)
        {
            var published = await Api.PublishExampleAsync(Path.GetFileName(file));
            Assert.Equal((string)JsonNode.Parse(await File.ReadAllTextAsync(file))!["name"]!, published.Name);
        }
    }

    [Fact]
    public async Task Unknown_definition_or_version_is_not_found()
    {
        using var byName = await Api.Http.GetAsync("/definitions/no-such-definition");
        await ApiClient.ProblemAsync(byName, HttpStatusCode.NotFound);
        var name = Definitions.Unique("one");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        using var byVersion = await Api.Http.GetAsync($"/definitions/{name}/versions/7");
        await ApiClient.ProblemAsync(byVersion, HttpStatusCode.NotFound);
    }
}

public sealed class SqliteDefinitionApiTests : DefinitionApiTests<SqliteBackend>;

public sealed class PostgresDefinitionApiTests : DefinitionApiTests<PostgresBackend>;

public sealed class MongoDbDefinitionApiTests : DefinitionApiTests<MongoDbBackend>;
