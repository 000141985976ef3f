using System.Text.Json.Nodes;
using Microsoft.AspNetCore.OpenApi;
using Microsoft.OpenApi;
using Microsoft.OpenApi.Reader;

namespace WorkflowService.Hosting;

/// <summary>
/// Puts docs/definition.schema.json (compiled into this assembly) into the OpenAPI document: its root as the
/// WorkflowDefinition component and each of its $defs as a component beside it, as the body of POST /definitions and as
/// the <c>definition</c> of every version the API returns. A test keeps the schema file in step with the compiler.
/// The file is plain JSON Schema; the one OpenAPI keyword the document adds is the discriminator of each choice of step
/// types, so that generators make one type per step type, told apart by <c>type</c>.
/// </summary>
internal sealed class DefinitionSchemaTransformer : IOpenApiDocumentTransformer
{
    public const string RootSchema = "WorkflowDefinition";
    private const string DefsPrefix = "#/$defs/";
    private const string ComponentsPrefix = "#/components/schemas/";

    /// <summary>The field whose value names a step's type; each step type's schema fixes it with a const.</summary>
    private const string Discriminator = "type";

    /// <summary>The schema file as published, one JSON Schema 2020-12 document (OpenAPI 3.1 schemas are that dialect).</summary>
    public static string SchemaJson { get; } = Resource("definition.schema.json");

    /// <summary>The README's first definition, shown as the example body of POST /definitions.</summary>
    private static readonly string ExampleJson = Resource("signal-roundtrip.json");

    /// <summary>The component name of a $defs entry: failStep becomes WorkflowDefinitionFailStep.</summary>
    public static string ComponentName(string definition) => RootSchema + char.ToUpperInvariant(definition[0]) + definition[1..];

    public Task TransformAsync(OpenApiDocument document, OpenApiDocumentTransformerContext context, CancellationToken cancellationToken)
    {
        document.Components ??= new OpenApiComponents();
        document.Components.Schemas ??= new Dictionary<string, IOpenApiSchema>();
        var root = JsonNode.Parse(SchemaJson)!.AsObject();
        var definitions = root["$defs"]?.AsObject() ?? [];
        root.Remove("$defs");
        root.Remove("$schema");
        foreach (var (name, schema) in definitions.ToList())
        {
            Discriminate(schema!.AsObject(), definitions);
            Add(document, ComponentName(name), schema!.AsObject());
        }

        Add(document, RootSchema, root);

        var reference = new OpenApiSchemaReference(RootSchema, document);
        var publish = ApiDocumentDescription.Operation(document, "/definitions", HttpMethod.Post);
        if (publish?.RequestBody is OpenApiRequestBody body)
        {
            body.Description = "The definition to publish (docs/definition-format.md); the compiler reports every problem with its JSON path.";
            body.Content = new Dictionary<string, OpenApiMediaType>
            {
                ["application/json"] = new() { Schema = reference, Example = JsonNode.Parse(ExampleJson) },
            };
        }

        if (document.Components.Schemas.TryGetValue("DefinitionView", out var viewSchema) && viewSchema is OpenApiSchema { Properties: { } view })
        {
            view["definition"] = reference;
        }

        return Task.CompletedTask;
    }

    private static void Add(OpenApiDocument document, string name, JsonObject schema)
    {
        if (document.Components!.Schemas!.ContainsKey(name))
        {
            throw new InvalidOperationException($"The OpenAPI document already has a schema named {name}.");
        }

        var rewritten = Rewrite(schema.DeepClone()).AsObject();
        if (rewritten["$ref"] is { } target)
        {
            // A component that only points at another (stepRef is a name) would be read back as a reference, not a schema.
            rewritten.Remove("$ref");
            rewritten["allOf"] = new JsonArray(new JsonObject { ["$ref"] = target.DeepClone() });
        }

        var json = rewritten.ToJsonString();
        var parsed = OpenApiModelFactory.Parse<OpenApiSchema>(json, OpenApiSpecVersion.OpenApi3_1, document, out var diagnostic, "json");
        if (parsed is null || diagnostic?.Errors is { Count: > 0 })
        {
            throw new InvalidOperationException(
                $"docs/definition.schema.json: {name} does not read as an OpenAPI 3.1 schema: {string.Join("; ", diagnostic?.Errors.Select(e => e.Message) ?? [])}");
        }

        document.Components.Schemas[name] = parsed;
    }

    /// <summary>
    /// Gives a oneOf whose every choice is a $defs schema that fixes <see cref="Discriminator"/> with a const (a step of
    /// any type, a step of a branch) the OpenAPI discriminator that maps each value to its schema. JSON Schema validators
    /// do not need it (the consts already tell the choices apart); generators read it to type each choice on its own.
    /// </summary>
    private static void Discriminate(JsonObject schema, JsonObject definitions)
    {
        if (schema["oneOf"] is not JsonArray choices)
        {
            return;
        }

        var mapping = new JsonObject();
        foreach (var choice in choices)
        {
            if ((string?)choice?["$ref"] is not { } pointer || !pointer.StartsWith(DefsPrefix, StringComparison.Ordinal)
                || definitions[pointer[DefsPrefix.Length..]]?["properties"]?[Discriminator]?["const"] is not JsonValue value)
            {
                return;
            }

            mapping[value.GetValue<string>()] = ComponentsPrefix + ComponentName(pointer[DefsPrefix.Length..]);
        }

        schema["discriminator"] = new JsonObject { ["propertyName"] = Discriminator, ["mapping"] = mapping };
    }

    /// <summary>
    /// Points $defs references at the components, and wraps a reference that has keywords beside it (other than a
    /// description) in allOf, which says the same in JSON Schema and keeps those keywords in every reader.
    /// </summary>
    private static JsonNode Rewrite(JsonNode node)
    {
        switch (node)
        {
            case JsonObject obj:
                foreach (var (key, value) in obj.ToList())
                {
                    if (value is not null)
                    {
                        obj[key] = Rewrite(value.DeepClone());
                    }
                }

                if (obj["$ref"] is JsonValue target && target.GetValue<string>() is { } pointer)
                {
                    if (pointer.StartsWith(DefsPrefix, StringComparison.Ordinal))
                    {
                        pointer = ComponentsPrefix + ComponentName(pointer[DefsPrefix.Length..]);
                    }

                    obj["$ref"] = pointer;
                    if (obj.Any(p => p.Key is not ("$ref" or "description")))
                    {
                        obj.Remove("$ref");
                        var allOf = obj["allOf"]?.AsArray() ?? [];
                        obj.Remove("allOf");
                        allOf.Insert(0, new JsonObject { ["$ref"] = pointer });
                        obj["allOf"] = allOf;
                    }
                }

                return obj;
            case JsonArray array:
                for (var i = 0; i < array.Count; i++)
                {
                    if (array[i] is { } item)
                    {
                        array[i] = Rewrite(item.DeepClone());
                    }
                }

                return array;
            default:
                return node;
        }
    }

    private static string Resource(string name)
    {
        using var stream = typeof(DefinitionSchemaTransformer).Assembly.GetManifestResourceStream(name)
            ?? throw new InvalidOperationException($"{name} is not compiled into {typeof(DefinitionSchemaTransformer).Assembly.GetName().Name}.");
        using var reader = new StreamReader(stream);
        return reader.ReadToEnd();
    }
}
