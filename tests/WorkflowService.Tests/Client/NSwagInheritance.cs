using System.Text.Json.Nodes;

namespace WorkflowService.Tests.Client;

/// <summary>
/// Restates the document's discriminated oneOf (a step is one of the step types, told apart by "type") in the shape NSwag
/// reads. NJsonSchema does not read oneOf: it takes the first choice, and here names a class it never writes
/// (RicoSuter/NJsonSchema#13). It does read the OpenAPI inheritance form: a base schema that holds the discriminator
/// mapping, and each mapped schema <c>allOf</c> that base. The rewrite makes the largest discriminated oneOf that base
/// (the discriminator field and the fields every choice shares move up to it), points every other discriminated oneOf
/// (the steps of a parallel branch, a subset of the types) at it, and leaves everything else as served.
/// </summary>
public static class NSwagInheritance
{
    private const string Prefix = "#/components/schemas/";

    public static string Rewrite(string openApiJson)
    {
        var document = JsonNode.Parse(openApiJson)!.AsObject();
        var schemas = document["components"]!["schemas"]!.AsObject();
        var unions = schemas
            .Where(s => s.Value?["oneOf"] is JsonArray && s.Value["discriminator"]?["mapping"] is JsonObject)
            .OrderByDescending(s => s.Value!["oneOf"]!.AsArray().Count)
            .Select(s => s.Key)
            .ToList();
        if (unions.Count == 0)
        {
            return openApiJson;
        }

        var baseName = unions[0];
        var union = schemas[baseName]!.AsObject();
        var discriminator = (string)union["discriminator"]!["propertyName"]!;
        var choices = union["discriminator"]!["mapping"]!.AsObject().Select(m => schemas[((string)m.Value!)[Prefix.Length..]]!.AsObject()).ToList();

        // The fields every choice has and requires, the discriminator among them, become the base's.
        var shared = choices.Select(c => c["required"]!.AsArray().Select(r => (string)r!).ToHashSet())
            .Aggregate((a, b) => { a.IntersectWith(b); return a; });
        var properties = new JsonObject();
        foreach (var field in choices[0]["required"]!.AsArray().Select(r => (string)r!).Where(shared.Contains))
        {
            properties[field] = field == discriminator
                ? new JsonObject { ["type"] = "string" }
                : choices[0]["properties"]![field]!.DeepClone();
        }

        schemas[baseName] = new JsonObject
        {
            ["type"] = "object",
            ["description"] = union["description"]?.DeepClone() ?? "",
            ["required"] = new JsonArray([.. shared.Select(f => (JsonNode)f)]),
            ["properties"] = properties,
            // The discriminator is read and written by NSwag's converter, not kept as an extra field (it would be written twice).
            ["additionalProperties"] = false,
            ["discriminator"] = union["discriminator"]!.DeepClone(),
        };
        foreach (var choice in choices)
        {
            foreach (var field in shared)
            {
                choice["properties"]!.AsObject().Remove(field);
            }

            var required = choice["required"]!.AsArray().Where(r => !shared.Contains((string)r!)).Select(r => r!.DeepClone()).ToArray();
            choice["required"] = new JsonArray(required);
            choice["allOf"] = new JsonArray(new JsonObject { ["$ref"] = Prefix + baseName });
        }

        foreach (var other in unions.Skip(1))
        {
            schemas.Remove(other);
            Redirect(document, Prefix + other, Prefix + baseName);
        }

        return document.ToJsonString();
    }

    private static void Redirect(JsonNode node, string from, string to)
    {
        switch (node)
        {
            case JsonObject obj:
                if ((string?)obj["$ref"] == from)
                {
                    obj["$ref"] = to;
                }

                foreach (var (_, value) in obj)
                {
                    if (value is not null)
                    {
                        Redirect(value, from, to);
                    }
                }

                break;
            case JsonArray array:
                foreach (var item in array)
                {
                    if (item is not null)
                    {
                        Redirect(item, from, to);
                    }
                }

                break;
        }
    }
}
