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
            // 204 No Content (a deletion's answer) has, by its definition, no body to describe.
            var successes = Responses(operation).Where(r => r.Status.StartsWith('2')).ToList();
            return successes.Count == 0
                ? [$"{operation.Name} declares no 2xx response"]
                : successes.Where(r => r.Status != "204" && (r.Content?["application/json"] ?? r.Content?["image/svg+xml"])?["schema"] is not JsonObject)
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

    /// <summary>Issue #13: numbers were also read from strings, so every integer was typed ["integer", "string"].</summary>
    [Fact]
    public void Numbers_are_typed_as_numbers_only()
    {
        Report(Schemas(_document).Where(s => Types(s.Schema) is var types && (types.Contains("integer") || types.Contains("number")))
            .Where(s => Types(s.Schema).Except(["integer", "number", "null"]).Any() || s.Schema["pattern"] is not null)
            .Select(s => $"{s.Where} is typed [{string.Join(", ", Types(s.Schema))}]{(s.Schema["pattern"] is null ? "" : " with a pattern")}"));
    }

    /// <summary>Issue #13: the README's start and signal bodies failed tsc --strict, their optional fields being required.</summary>
    [Fact]
    public void No_request_body_requires_a_field_that_may_be_null()
    {
        var bodies = Operations().Select(o => (o.Name, Schema: Resolve(o.Node["requestBody"]?["content"]?["application/json"]?["schema"])))
            .Where(b => b.Schema is not null).ToList();
        Assert.NotEmpty(bodies);
        Report(from body in bodies
               from required in body.Schema!["required"]?.AsArray().Select(r => (string)r!) ?? []
               let property = body.Schema["properties"]?[required]
               where property is JsonObject p && (Types(p).Contains("null") || p["oneOf"]?.AsArray().Any(o => (string?)o?["type"] == "null") == true)
               select $"{body.Name}: '{required}' is required but may be null");
        var start = Resolve(OperationAt("post", "/instances")["requestBody"]!["content"]!["application/json"]!["schema"])!;
        Assert.Equal(["definition"], start["required"]!.AsArray().Select(r => (string)r!));
        var signal = Resolve(OperationAt("post", "/instances/{id}/signals")["requestBody"]!["content"]!["application/json"]!["schema"])!;
        Assert.Equal(["name"], signal["required"]!.AsArray().Select(r => (string)r!));
    }

    [Fact]
    public void Closed_sets_are_enums()
    {
        var schemas = _document["components"]!["schemas"]!;
        Assert.Equal("#/components/schemas/InstanceStatus", (string?)schemas["InstanceView"]!["properties"]!["status"]!["$ref"]);
        Assert.Equal("#/components/schemas/SignalStatus", (string?)schemas["SignalView"]!["properties"]!["status"]!["$ref"]);
        Assert.Equal("#/components/schemas/HumanTaskStatus", (string?)schemas["TaskView"]!["properties"]!["status"]!["$ref"]);
        Assert.Equal("#/components/schemas/WaitKind", (string?)schemas["WaitView"]!["properties"]!["kind"]!["$ref"]);

        Assert.Equal("#/components/schemas/HistoryEventType", (string?)schemas["HistoryEventView"]!["properties"]!["type"]!["$ref"]);
        var eventTypes = typeof(WorkflowService.Engine.Persistence.HistoryEventTypes).GetFields()
            .Where(f => f.IsLiteral).Select(f => (string)f.GetRawConstantValue()!).Order(StringComparer.Ordinal);
        Assert.Equal(eventTypes, schemas["HistoryEventType"]!["enum"]!.AsArray().Select(e => (string)e!).Order(StringComparer.Ordinal));

        var waitFor = OperationAt("get", "/instances/{id}")["parameters"]!.AsArray().Single(p => (string?)p!["name"] == "waitFor")!;
        Assert.Equal("array", (string?)waitFor["schema"]!["type"]);
        Assert.Equal("#/components/schemas/InstanceStatus", (string?)waitFor["schema"]!["items"]!["$ref"]);
        Assert.False((bool?)waitFor["explode"]);
        foreach (var (path, status) in new[] { ("/instances", "InstanceStatus"), ("/tasks", "HumanTaskStatus"), ("/signals", "SignalStatus") })
        {
            var parameter = OperationAt("get", path)["parameters"]!.AsArray().Single(p => (string?)p!["name"] == "status")!;
            Assert.Equal($"#/components/schemas/{status}", (string?)parameter["schema"]!["$ref"]);
        }
    }

    /// <summary>
    /// Issue #13: the diagrams were described as a stream (a component named after .NET's Stream). They are SVG text, inline;
    /// the binary format lets NSwag download them as a file (it would JSON-parse a plain string) and is a string to openapi-typescript.
    /// </summary>
    [Theory]
    [InlineData("/definitions/{name}/versions/{version}/diagram.svg")]
    [InlineData("/instances/{id}/diagram.svg")]
    public void Diagrams_are_svg_text(string path)
    {
        var content = OperationAt("get", path)["responses"]!["200"]!["content"]!.AsObject();

        Assert.Equal(["image/svg+xml"], content.Select(c => c.Key));
        var schema = content["image/svg+xml"]!["schema"]!;
        Assert.Equal("string", (string?)schema["type"]);
        Assert.Equal("binary", (string?)schema["format"]);
        Assert.Null(schema["$ref"]);
        Assert.Null(_document["components"]!["schemas"]!["Stream"]);
    }

    [Fact]
    public void Publishing_takes_and_reading_returns_the_definition_schema()
    {
        const string reference = "#/components/schemas/WorkflowDefinition";
        var body = OperationAt("post", "/definitions")["requestBody"]!["content"]!["application/json"]!;
        Assert.Equal(reference, (string?)body["schema"]!["$ref"]);
        Assert.Equal("signal-roundtrip", (string?)body["example"]!["name"]);
        Assert.Equal(reference, (string?)_document["components"]!["schemas"]!["DefinitionView"]!["properties"]!["definition"]!["$ref"]);

        var definition = _document["components"]!["schemas"]!["WorkflowDefinition"]!;
        Assert.Equal(["name", "steps"], definition["required"]!.AsArray().Select(r => (string)r!));
        Assert.Equal("#/components/schemas/WorkflowDefinitionStep", (string?)definition["properties"]!["steps"]!["items"]!["$ref"]);
    }

    [Fact]
    public void Each_step_type_is_its_own_schema_told_apart_by_type()
    {
        // Issue #37: generators typed a step as one loose object, so a fail step with "error" for "reason" compiled.
        var schemas = _document["components"]!["schemas"]!;
        foreach (var (union, types) in new[]
                 {
                     ("WorkflowDefinitionStep", 12), // forEach (#40) added
                     ("WorkflowDefinitionBranchStep", 9), // neither complete nor parallel in a parallel branch
                 })
        {
            var schema = schemas[union]!;
            var choices = schema["oneOf"]!.AsArray().Select(c => (string)c!["$ref"]!).ToList();
            Assert.Equal(types, choices.Count);
            Assert.Equal("type", (string?)schema["discriminator"]!["propertyName"]);
            var mapping = schema["discriminator"]!["mapping"]!.AsObject().ToDictionary(m => m.Key, m => (string)m.Value!);
            Assert.Equal(choices.Order(StringComparer.Ordinal), mapping.Values.Order(StringComparer.Ordinal));
            foreach (var (type, reference) in mapping)
            {
                var choice = Resolve(new JsonObject { ["$ref"] = reference })!;
                Assert.Equal(type, (string?)choice["properties"]!["type"]!["const"]);
                Assert.Equal(false, (bool?)choice["additionalProperties"]);
                Assert.Contains("type", choice["required"]!.AsArray().Select(r => (string)r!));
            }
        }

        var fail = schemas["WorkflowDefinitionFailStep"]!;
        Assert.Equal(["id", "type", "reason"], fail["required"]!.AsArray().Select(r => (string)r!));
        Assert.Null(fail["properties"]!["error"]);
    }

    [Fact]
    public void Info_tags_and_servers_read_well()
    {
        Assert.False(string.IsNullOrWhiteSpace((string?)_document["info"]!["summary"]));
        Assert.False(string.IsNullOrWhiteSpace((string?)_document["info"]!["description"]));
        var tags = _document["tags"]!.AsArray();
        Assert.NotEmpty(tags);
        Report(tags.Where(t => string.IsNullOrWhiteSpace((string?)t!["description"])).Select(t => $"tag {(string?)t!["name"]} has no description"));
        Report(Operations().Where(o => string.IsNullOrWhiteSpace((string?)o.Node["summary"])).Select(o => $"{o.Name} has no summary"));
        var servers = _document["servers"]!.AsArray();
        Assert.NotEmpty(servers);
        Report(servers.Select(s => (string)s!["url"]!).Where(u => u.EndsWith('/')).Select(u => $"server {u} ends with a slash"));
    }

    [Fact]
    public void Every_operation_declares_a_client_error()
    {
        Report(Operations().Where(o => !Responses(o).Any(r => r.Status.StartsWith('4'))).Select(o => $"{o.Name} declares no 4xx response"));
    }

    /// <summary>Without OpenApi:License the document states none (the repository has not chosen one; see tests/tools/redocly.yaml).</summary>
    [Fact]
    public void The_document_states_the_repositorys_licence()
    {
        // appsettings.json states the licence of the LICENSE file; an operator's OpenApi:License settings replace it.
        Assert.StartsWith("MIT License", File.ReadAllText(Repository.Path("LICENSE")), StringComparison.Ordinal);
        Assert.Equal("MIT", (string?)_document["info"]!["license"]!["name"]);
        Assert.Equal("MIT", (string?)_document["info"]!["license"]!["identifier"]);
    }

    private JsonObject OperationAt(string method, string path) => _document["paths"]![path]![method]!.AsObject();

    private JsonObject? Resolve(JsonNode? schema)
    {
        const string prefix = "#/components/schemas/";
        return (string?)schema?["$ref"] is { } reference && reference.StartsWith(prefix, StringComparison.Ordinal)
            ? _document["components"]?["schemas"]?[reference[prefix.Length..]]?.AsObject()
            : schema as JsonObject;
    }

    private static string[] Types(JsonObject schema) => schema["type"] switch
    {
        JsonArray types => types.Select(t => (string)t!).ToArray(),
        JsonValue type => [(string)type!],
        _ => [],
    };

    /// <summary>Every schema object in the document, at any depth, with its JSON pointer.</summary>
    private static IEnumerable<(string Where, JsonObject Schema)> Schemas(JsonNode? node, string where = "#")
    {
        switch (node)
        {
            case JsonObject obj:
                if (obj.ContainsKey("type"))
                {
                    yield return (where, obj);
                }

                foreach (var (key, value) in obj)
                {
                    foreach (var inner in Schemas(value, $"{where}/{key}"))
                    {
                        yield return inner;
                    }
                }

                break;
            case JsonArray array:
                for (var i = 0; i < array.Count; i++)
                {
                    foreach (var inner in Schemas(array[i], $"{where}/{i}"))
                    {
                        yield return inner;
                    }
                }

                break;
        }
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
