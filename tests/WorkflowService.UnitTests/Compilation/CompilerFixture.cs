using System.Text.Json.Nodes;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Expressions;

namespace WorkflowService.UnitTests.Compilation;

/// <summary>The compiler as the service builds it, called on JSON text: what it accepts and every problem it reports.</summary>
internal static class CompilerFixture
{
    public static readonly ExpressionRuntime Expressions = new(Options.Create(new ExpressionOptions()), TimeProvider.System);

    public static readonly DefinitionCompiler Compiler = new(Expressions);

    /// <summary>A definition named "t" with the given steps (each a JSON object).</summary>
    public static string Steps(params string[] steps) => $$"""{ "name": "t", "steps": [ {{string.Join(", ", steps)}} ] }""";

    /// <summary>Parses and compiles; the diagnostics, and the definition when there are none.</summary>
    public static (CompiledDefinition? Definition, List<Diagnostic> Diagnostics) Compile(string json, int version = 1)
    {
        var diagnostics = new List<Diagnostic>();
        var document = DefinitionCompiler.Parse(json, diagnostics);
        var definition = document is null ? null : Compiler.Compile(document, version, diagnostics);
        Assert.Equal(diagnostics.Count == 0, definition is not null);
        return (definition, diagnostics);
    }

    /// <summary>Compiles a definition that must be valid.</summary>
    public static CompiledDefinition Valid(string json)
    {
        var (definition, diagnostics) = Compile(json);
        Assert.Empty(diagnostics);
        return definition!;
    }

    /// <summary>Compiles a definition that must be refused with exactly these problems, in this order.</summary>
    public static void Refused(string json, params (string Path, string Message)[] expected)
    {
        var (_, diagnostics) = Compile(json);
        Assert.Equal(expected.Select(e => new Diagnostic(e.Path, e.Message)), diagnostics);
    }

    /// <summary>The canonical document the compiled definition stores (what the API returns), as a JSON tree.</summary>
    public static JsonObject Canonical(CompiledDefinition definition) => JsonNode.Parse(definition.Json)!.AsObject();

    /// <summary>The canonical form of the step with <paramref name="id"/>, searched in the steps and in parallel branches.</summary>
    public static JsonObject CanonicalStep(CompiledDefinition definition, string id) =>
        FindStep(Canonical(definition)["steps"]!.AsArray(), id) ?? throw new InvalidOperationException($"no step '{id}' in {definition.Json}");

    private static JsonObject? FindStep(JsonArray steps, string id)
    {
        foreach (var step in steps.Select(s => s!.AsObject()))
        {
            if ((string?)step["id"] == id)
            {
                return step;
            }

            foreach (var branch in step["branches"]?.AsArray() ?? [])
            {
                if (branch!["steps"] is JsonArray inner && FindStep(inner, id) is { } found)
                {
                    return found;
                }
            }
        }

        return null;
    }

    public static void AssertJson(string expected, JsonNode? actual) =>
        Assert.True(JsonNode.DeepEquals(JsonNode.Parse(expected), actual), $"expected {expected}\nactual   {actual?.ToJsonString()}");
}
