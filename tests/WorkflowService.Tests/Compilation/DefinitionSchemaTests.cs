using System.Reflection;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.Json.Serialization;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Expressions;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Compilation;

/// <summary>
/// docs/definition.schema.json, which the OpenAPI document serves as the body of POST /definitions, kept in step with the
/// compiler (the authority): the same fields per step type, the examples valid for both, wrong documents refused by both.
/// The schema is checked with Ajv (tests/tools/definition-schema/validate.mjs), as the file and as the served component.
/// </summary>
public sealed class DefinitionSchemaTests : SharedServiceTest<SqliteBackend>
{
    private static readonly string SchemaPath = Repository.Path("docs", "definition.schema.json");

    /// <summary>The fields every step has, whatever its type.</summary>
    private static readonly string[] CommonStepFields = ["id", "type", "description"];

    private readonly DefinitionCompiler _compiler = new(new ExpressionRuntime(Options.Create(new ExpressionOptions()), TimeProvider.System));

    private static JsonObject Schema => JsonNode.Parse(File.ReadAllText(SchemaPath))!.AsObject();

    /// <summary>Wrong documents, each with the one thing wrong with it.</summary>
    private static readonly (string What, string Json)[] WrongDefinitions =
    [
        ("a waitForSignal step without its signal", """{"name":"w","steps":[{"id":"a","type":"waitForSignal"},{"id":"b","type":"complete"}]}"""),
        ("an unknown step type", """{"name":"w","steps":[{"id":"a","type":"sleep","duration":"PT1S"},{"id":"b","type":"complete"}]}"""),
        ("a field of another step type", """{"name":"w","steps":[{"id":"a","type":"delay","duration":"PT1S","signal":"go"},{"id":"b","type":"complete"}]}"""),
        ("a duration that is not ISO 8601", """{"name":"w","steps":[{"id":"a","type":"delay","duration":"30 seconds"},{"id":"b","type":"complete"}]}"""),
        ("no name", """{"steps":[{"id":"b","type":"complete"}]}"""),
        ("an unknown top-level field", """{"name":"w","author":"me","steps":[{"id":"b","type":"complete"}]}"""),
        ("no steps", """{"name":"w","steps":[]}"""),
        ("a fail step with error instead of reason (issue #37)", """{"name":"w","steps":[{"id":"a","type":"fail","error":"'out of stock'"}]}"""),
        ("a complete step in a parallel branch",
            """{"name":"w","steps":[{"id":"p","type":"parallel","branches":[{"name":"a","steps":[{"id":"c","type":"complete"}]}]},{"id":"b","type":"complete"}]}"""),
        ("an http step with a method it does not know", """{"name":"w","steps":[{"id":"a","type":"http","method":"FETCH","url":"'https://x'"},{"id":"b","type":"complete"}]}"""),
    ];

    /// <summary>The step types whose branches the schema describes (decision: when and next; parallel: name and steps).</summary>
    private static readonly string[] BranchingTypes = ["decision", "parallel"];

    [Fact]
    public async Task Every_example_definition_validates_against_the_schema_and_the_served_document_and_compiles()
    {
        var examples = Directory.GetFiles(Repository.Path("docs", "examples"), "*.json").Order(StringComparer.Ordinal).ToList();
        Assert.NotEmpty(examples);

        var results = await ValidateAsync(examples);

        var faults = new List<string>();
        foreach (var (file, result) in examples.Zip(results))
        {
            faults.AddRange(result.Faults(valid: true).Select(f => $"{Path.GetFileName(file)}: {f}"));
            faults.AddRange(Compile(await File.ReadAllTextAsync(file)).Select(d => $"{Path.GetFileName(file)} does not compile: {d.Path}: {d.Message}"));
        }

        Assert.True(faults.Count == 0, string.Join(Environment.NewLine, faults));
    }

    [Fact]
    public async Task Every_definition_the_api_returns_validates_against_the_schema_it_is_described_by()
    {
        // The document types DefinitionView.definition as the schema: what GET returns must satisfy it, as what POST takes.
        var examples = Directory.GetFiles(Repository.Path("docs", "examples"), "*.json").Order(StringComparer.Ordinal).ToList();
        var work = Directory.CreateTempSubdirectory("workflow-definition-returned-");
        try
        {
            var files = new List<string>();
            foreach (var example in examples)
            {
                var published = await Api.PublishAsync(await File.ReadAllTextAsync(example));
                var returned = JsonNode.Parse(await Api.Http.GetStringAsync($"/definitions/{published.Name}/versions/{published.Version}"))!;
                var file = Path.Combine(work.FullName, Path.GetFileName(example));
                await File.WriteAllTextAsync(file, returned["definition"]!.ToJsonString());
                files.Add(file);
            }

            var results = await ValidateAsync(files);

            var faults = results.SelectMany(r => r.Faults(valid: true).Select(f => $"{Path.GetFileName(r.File)} as returned: {f}")).ToList();
            Assert.True(faults.Count == 0, string.Join(Environment.NewLine, faults));
        }
        finally
        {
            work.Delete(recursive: true);
        }
    }

    [Fact]
    public async Task A_wrong_definition_is_refused_by_the_schema_the_served_document_and_the_compiler()
    {
        var cases = WrongDefinitions;
        var work = Directory.CreateTempSubdirectory("workflow-definition-schema-");
        try
        {
            var files = new List<string>();
            foreach (var (_, json) in cases)
            {
                var file = Path.Combine(work.FullName, $"{files.Count}.json");
                await File.WriteAllTextAsync(file, json);
                files.Add(file);
            }

            var results = await ValidateAsync(files);

            var faults = new List<string>();
            foreach (var ((what, json), result) in cases.Zip(results))
            {
                faults.AddRange(result.Faults(valid: false).Select(f => $"{what}: {f}"));
                if (Compile(json).Count == 0)
                {
                    faults.Add($"{what}: the compiler accepts it");
                }
            }

            Assert.True(faults.Count == 0, string.Join(Environment.NewLine, faults));
        }
        finally
        {
            work.Delete(recursive: true);
        }
    }

    [Fact]
    public void The_schema_lists_the_step_types_the_compiler_knows()
    {
        // The compiler names the types it knows when it meets one it does not.
        var diagnostic = Assert.Single(Compile("""{"name":"w","steps":[{"id":"a","type":"?"}]}"""), d => d.Path == "$.steps[0].type");
        var compilerTypes = diagnostic.Message["type must be one of: ".Length..].Split(", ");

        var schemaTypes = StepSchemas().Select(s => s.Type).ToArray();

        Assert.Equal(compilerTypes.Order(StringComparer.Ordinal), schemaTypes.Order(StringComparer.Ordinal));
    }

    [Fact]
    public void The_schema_allows_each_step_type_exactly_the_fields_the_compiler_accepts()
    {
        var faults = new List<string>();
        foreach (var (type, _, schemaFields) in StepSchemas())
        {
            var accepted = JsonFields(typeof(StepDocument)).Where(f => !CommonStepFields.Contains(f.Name))
                .Where(f => !Compile(StepWith(type, f)).Any(d => d.Path == $"$.steps[0].{f.Name}" && d.Message.Contains("does not apply", StringComparison.Ordinal)))
                .Select(f => f.Name)
                .ToHashSet();
            var described = schemaFields.Except(CommonStepFields).ToHashSet();
            faults.AddRange(accepted.Except(described).Select(f => $"{type}: the compiler reads '{f}', the schema does not allow it"));
            faults.AddRange(described.Except(accepted).Select(f => $"{type}: the schema allows '{f}', the compiler refuses it"));
        }

        Assert.True(faults.Count == 0, string.Join(Environment.NewLine, faults));
    }

    [Fact]
    public void The_schema_describes_every_field_of_the_definition_and_of_its_branches()
    {
        var root = Schema["properties"]!.AsObject().Select(p => p.Key);
        Assert.Equal(JsonFields(typeof(DefinitionDocument)).Select(f => f.Name).Order(StringComparer.Ordinal), root.Order(StringComparer.Ordinal));

        var steps = StepSchemas().ToDictionary(s => s.Type, s => s.Schema);
        var branchFields = BranchingTypes
            .SelectMany(type => steps[type]["properties"]!["branches"]!["items"]!["properties"]!.AsObject().Select(p => p.Key))
            .Distinct();
        Assert.Equal(JsonFields(typeof(BranchDocument)).Select(f => f.Name).Order(StringComparer.Ordinal), branchFields.Order(StringComparer.Ordinal));
    }

    private List<Diagnostic> Compile(string json)
    {
        var diagnostics = new List<Diagnostic>();
        if (DefinitionCompiler.Parse(json, diagnostics) is { } document)
        {
            _compiler.Compile(document, 1, diagnostics);
        }

        return diagnostics;
    }

    /// <summary>A definition whose first step has the type and only the one field (with a value of its JSON type).</summary>
    private static string StepWith(string type, (string Name, Type Type) field)
    {
        JsonNode value = field.Type switch
        {
            _ when field.Type == typeof(int?) => 1,
            _ when field.Type == typeof(Dictionary<string, string>) => new JsonObject { ["k"] = "1" },
            _ when field.Type == typeof(List<BranchDocument>) || field.Type == typeof(List<StepDocument>) => new JsonArray(),
            _ when field.Type == typeof(string) => "x",
            _ when field.Type == typeof(bool?) => true,
            _ when field.Type == typeof(double?) => 0.5,
            _ when field.Type == typeof(CompletionDocument) => new JsonObject { ["atLeast"] = 1 },
            _ => throw new InvalidOperationException($"no sample value for {field.Name} ({field.Type})"),
        };
        var step = new JsonObject { ["id"] = "a", ["type"] = type, [field.Name] = value };
        return new JsonObject { ["name"] = "w", ["steps"] = new JsonArray(step, new JsonObject { ["id"] = "b", ["type"] = "complete" }) }.ToJsonString();
    }

    /// <summary>Each step type with its schema (a choice of the step's oneOf, told apart by its const type) and that schema's fields.</summary>
    private static IEnumerable<(string Type, JsonObject Schema, string[] Fields)> StepSchemas()
    {
        var definitions = Schema["$defs"]!.AsObject();
        foreach (var choice in definitions["step"]!["oneOf"]!.AsArray())
        {
            var schema = definitions[((string)choice!["$ref"]!)["#/$defs/".Length..]]!.AsObject();
            Assert.Equal(false, (bool?)schema["additionalProperties"]);
            var type = (string)schema["properties"]!["type"]!["const"]!;
            yield return (type, schema, schema["properties"]!.AsObject().Select(p => p.Key).ToArray());
        }
    }

    private static IEnumerable<(string Name, Type Type)> JsonFields(Type type) =>
        type.GetProperties(BindingFlags.Public | BindingFlags.Instance)
            .Select(p => (p.GetCustomAttribute<JsonPropertyNameAttribute>()?.Name ?? JsonNamingPolicy.CamelCase.ConvertName(p.Name), p.PropertyType));

    /// <summary>Ajv's verdict on each file, against the schema file and against the served document's WorkflowDefinition.</summary>
    private async Task<List<SchemaVerdict>> ValidateAsync(List<string> files)
    {
        var node = ExternalTools.OnPath("node", "npm", "install Node.js, then `npm ci --prefix tests/tools`");
        ExternalTools.Npm("tsc"); // the npm tools (Ajv with them) are installed
        var document = Path.GetTempFileName();
        try
        {
            await File.WriteAllTextAsync(document, await Api.Http.GetStringAsync("/openapi/v1.json"));
            var run = await ExternalTools.RunAsync(node, [Path.Combine(ExternalTools.NpmProject, "definition-schema", "validate.mjs"), SchemaPath, document, .. files],
                ExternalTools.NpmProject, TimeSpan.FromMinutes(2));
            Assert.True(run.ExitCode == 0, $"validate.mjs failed: {run}");
            var verdicts = run.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries)
                .Select(line => JsonSerializer.Deserialize<SchemaVerdict>(line, WorkflowServiceFactory.Json)!)
                .ToList();
            Assert.Equal(files.Count, verdicts.Count);
            return verdicts;
        }
        finally
        {
            File.Delete(document);
        }
    }

#pragma warning disable CA1812 // made by the JSON deserializer
    private sealed record SchemaVerdict(string File, SchemaOutcome Schema, SchemaOutcome Document)
    {
        public IEnumerable<string> Faults(bool valid)
        {
            foreach (var (where, outcome) in new[] { ("docs/definition.schema.json", Schema), ("the served OpenAPI document", Document) })
            {
                if (outcome.Valid != valid)
                {
                    yield return valid
                        ? $"invalid against {where}: {string.Join("; ", outcome.Errors)}"
                        : $"valid against {where}";
                }
            }
        }
    }

    private sealed record SchemaOutcome(bool Valid, IReadOnlyList<string> Errors);
#pragma warning restore CA1812
}
