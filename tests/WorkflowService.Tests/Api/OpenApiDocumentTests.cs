using System.Text.Json.Nodes;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Api;

/// <summary>
/// The shape of the served OpenAPI document that clients are generated from: an operationId on every operation, typed
/// success responses, and a problem+json schema for every error response.
/// </summary>
public sealed class OpenApiDocumentTests : SharedServiceTest<SqliteBackend>
{
    private static readonly string[] HttpMethods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
    private static readonly string[] BodyStatuses = ["400", "413"];
    private static readonly string[] ProblemProperties = ["type", "title", "status", "detail", "instance"];

    private JsonObject _document = null!;

    public override async ValueTask InitializeAsync()
    {
        await base.InitializeAsync();
        _document = JsonNode.Parse(await Api.Http.GetStringAsync("/openapi/v1.json"))!.AsObject();
    }

    [Fact]
    public void Every_operation_has_a_unique_operation_id()
    {
        var operations = Operations().ToList();
        Assert.NotEmpty(operations);
        Report(operations.Where(o => string.IsNullOrWhiteSpace(o.Id)).Select(o => $"{o.Name} has no operationId"));
        Report(operations.Where(o => o.Id is not null).GroupBy(o => o.Id, StringComparer.Ordinal).Where(g => g.Count() > 1)
            .Select(g => $"operationId {g.Key} is on {string.Join(", ", g.Select(o => o.Name))}"));
    }

    [Fact]
    public void Every_success_response_has_a_json_schema()
    {
        Report(Operations().SelectMany(operation =>
        {
            var successes = Responses(operation).Where(r => r.Status.StartsWith('2')).ToList();
            return successes.Count == 0
                ? [$"{operation.Name} declares no 2xx response"]
                : successes.Where(r => (r.Content?["application/json"] ?? r.Content?["image/svg+xml"])?["schema"] is not JsonObject)
                    .Select(r => $"{operation.Name} {r.Status} has no application/json (or image/svg+xml, for diagrams) schema");
        }));
    }

    [Fact]
    public void Every_error_response_is_a_problem_details_schema()
    {
        var errors = Operations().SelectMany(o => Responses(o).Where(r => !r.Status.StartsWith('2')).Select(r => (Operation: o, Response: r))).ToList();
        Assert.NotEmpty(errors);
        Report(errors.SelectMany(e => ProblemSchemaFaults($"{e.Operation.Name} {e.Response.Status}", e.Response.Content)));
    }

    /// <summary>The pipeline answers a malformed body with 400 and one over Api:MaxRequestBodyBytes with 413, on every operation.</summary>
    [Fact]
    public void Operations_that_read_a_body_declare_the_400_and_413_problems()
    {
        var withBody = Operations().Where(o => o.Node["requestBody"] is not null).ToList();
        Assert.NotEmpty(withBody);
        Report(from operation in withBody
               let statuses = Responses(operation).Select(r => r.Status).ToHashSet()
               from status in BodyStatuses
               where !statuses.Contains(status)
               select $"{operation.Name} reads a body but declares no {status}");
    }

    /// <summary>Enums travel as their names (JsonStringEnumConverter), and the schemas have to say so for generated clients.</summary>
    [Fact]
    public void Enum_schemas_are_typed_as_strings()
    {
        var enums = _document["components"]!["schemas"]!.AsObject().Where(s => s.Value?["enum"] is not null).ToList();
        Assert.NotEmpty(enums);
        Report(enums.Where(s => (string?)s.Value!["type"] != "string").Select(s => $"enum schema {s.Key} is not typed as a string"));
    }

    private static void Report(IEnumerable<string> faults)
    {
        var list = faults.ToList();
        Assert.True(list.Count == 0, string.Join(Environment.NewLine, list));
    }

    private IEnumerable<string> ProblemSchemaFaults(string where, JsonObject? content)
    {
        var mediaTypes = content?.Select(c => c.Key).ToList() ?? [];
        if (mediaTypes is not ["application/problem+json"])
        {
            yield return $"{where}: content is [{string.Join(", ", mediaTypes)}], not application/problem+json";
            yield break;
        }

        var schema = content!["application/problem+json"]?["schema"];
        if ((string?)schema?["$ref"] is { } reference)
        {
            const string prefix = "#/components/schemas/";
            schema = reference.StartsWith(prefix, StringComparison.Ordinal) ? _document["components"]?["schemas"]?[reference[prefix.Length..]] : null;
        }

        var properties = schema?["properties"] as JsonObject;
        foreach (var property in ProblemProperties.Where(p => properties?.ContainsKey(p) != true))
        {
            yield return $"{where}: the problem schema has no '{property}'";
        }
    }

    private sealed record Operation(string Name, string? Id, JsonObject Node);

    private sealed record Response(string Status, JsonObject? Content);

    private IEnumerable<Operation> Operations() =>
        from path in _document["paths"]!.AsObject()
        from item in path.Value!.AsObject()
        where HttpMethods.Contains(item.Key)
        select new Operation($"{item.Key.ToUpperInvariant()} {path.Key}", (string?)item.Value!["operationId"], item.Value.AsObject());

    private static IEnumerable<Response> Responses(Operation operation) =>
        operation.Node["responses"]?.AsObject().Select(r => new Response(r.Key, r.Value?["content"]?.AsObject())) ?? [];
}
