using System.Reflection;
using System.Text.Json.Nodes;
using Microsoft.AspNetCore.OpenApi;
using Microsoft.Extensions.Options;
using Microsoft.OpenApi;
using WorkflowService.Diagrams;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Hosting;

/// <summary>
/// What the endpoints' signatures cannot say about themselves: the API's summary and licence, a description of each
/// tag and common parameter, examples of the README's request bodies, the closed sets that travel as strings (history
/// event types, waitFor's statuses), and the server URL without the trailing slash that would double every path's.
/// </summary>
internal sealed class ApiDocumentDescription(IOptions<ApiDocumentOptions> options) : IOpenApiDocumentTransformer
{
    public const string HistoryEventTypeSchema = "HistoryEventType";

    private static readonly Dictionary<string, string> TagDescriptions = new(StringComparer.Ordinal)
    {
        ["Definitions"] = "Workflow definitions (the WorkflowDefinition schema, docs/definition-format.md): publish a new version, read the versions, and draw one as an SVG diagram.",
        ["Instances"] = "Running workflows: start one, read it or wait for a status, read its history and signals, send it signals, and cancel, terminate, suspend or resume it.",
        ["Tasks"] = "The inbox of human tasks that humanTask steps create: listed by assignee, role and status, claimed and completed by the assignee or a member of the role.",
        ["Schedules"] = "Starts on a calendar: a cron expression in a time zone or a fixed interval, each occurrence started once, with overlap and catch-up policies, pause, trigger and backfill.",
        ["Subscriptions"] = "Events out: endpoints that hear of their instances (started, completed, tasks, custom events...), signed with a secret of their own, with pause, resume and secret rotation.",
        ["Migrations"] = "Moving waiting instances to another version of their definition, one or all of them, with a dry run that only reports where each wait lands.",
        ["Lifecycle"] = "The database's lifecycle: its schema and the range of releases it supports, migrating it, and purging ended instances whose retention period is over (with a dry run).",
        ["Operations"] = "This node's counters since it started, for operators; answered from memory.",
        ["Signals"] = "Signals across instances by status, claiming node and name: what the workers hold and what waits for its due time.",
        ["Dead letters"] = "Signals whose handling failed after every retry, with the reason; a replay queues one again.",
    };

    private static readonly Dictionary<string, string> ParameterDescriptions = new(StringComparer.Ordinal)
    {
        ["offset"] = "How many items of the list to skip (default 0).",
        ["limit"] = "How many items to return at most (default 50, at most 500).",
        ["after"] = "The next of the page before: the page starts after that item (at the first when left out).",
        ["Idempotency-Key"] = "A key of the caller's own (1-200 characters): repeating a request with the same key answers with what the first one created.",
        ["timeout"] = "With waitFor: how many seconds to wait at most (the answer is then the instance as it is).",
        ["waitFor"] = "Wait until the instance has one of these statuses (or ends), at most timeout seconds: Completed,Failed. Repeating the parameter works too.",
        ["businessKey"] = "Only the instance started with this business key.",
        ["createdFrom"] = "Only instances created at or after this time (ISO 8601).",
        ["createdTo"] = "Only instances created before this time (ISO 8601).",
        ["claimedBy"] = "Only signals claimed by this node (Workers:NodeId).",
        ["assignee"] = "Only tasks assigned to this user; me is the caller.",
        ["role"] = "Only tasks offered to this role.",
        ["instanceId"] = "Only the tasks of this instance.",
    };

    public Task TransformAsync(OpenApiDocument document, OpenApiDocumentTransformerContext context, CancellationToken cancellationToken)
    {
        Describe(document.Info, options.Value.License);
        foreach (var server in document.Servers ?? [])
        {
            // The generated URL ends in "/", and every path starts with one.
            server.Url = server.Url?.TrimEnd('/');
        }

        foreach (var tag in document.Tags ?? new HashSet<OpenApiTag>())
        {
            tag.Description ??= tag.Name is { } name && TagDescriptions.TryGetValue(name, out var description) ? description : null;
        }

        foreach (var operation in (document.Paths ?? []).Values.SelectMany(p => p.Operations?.Values.AsEnumerable() ?? []))
        {
            foreach (var parameter in (operation.Parameters ?? []).OfType<OpenApiParameter>())
            {
                if (parameter.Description is null && parameter.Name is { } name && ParameterDescriptions.TryGetValue(name, out var description))
                {
                    parameter.Description = description;
                }
            }
        }

        DescribeDiagrams(document);
        DescribeHistoryEventTypes(document);
        DescribeWaitFor(document);
        Example(document, "/instances", HttpMethod.Post, """{"definition":"signal-roundtrip","input":{"customer":42}}""");
        Example(document, "/instances/{id}/signals", HttpMethod.Post, """{"name":"go","payload":{"value":7}}""");
        return Task.CompletedTask;
    }

    private static void Describe(OpenApiInfo info, ApiDocumentLicense license)
    {
        info.Title = "Workflow Service";
        info.Summary = "Publish workflow definitions, start and signal instances, query their state and history, and work the task inbox.";
        info.Description = """
            Business applications **publish** workflow definitions (JSON), **start** instances, **signal** them (external
            events, callbacks, timers, completed human tasks) and **query** them (state, history, lists, task inboxes).

            Every error is an RFC 9457 problem (`application/problem+json`) that names the field or parameter at fault.
            Callers authenticate with an API key (`X-Api-Key`) or a bearer token, unless the service runs without
            authentication (development).
            """;
        if (!string.IsNullOrWhiteSpace(license.Name))
        {
            info.License = new OpenApiLicense
            {
                Name = license.Name,
                // OpenAPI 3.1 allows one of the two: a URL an operator configures replaces the shipped SPDX identifier.
                Identifier = license.Url is not null || string.IsNullOrWhiteSpace(license.Identifier) ? null : license.Identifier,
                Url = license.Url,
            };
        }
    }

    /// <summary>
    /// A diagram is SVG text. Its format is binary, which NSwag reads as a file to download (it would JSON-parse a plain
    /// string, and fail) and openapi-typescript as a string.
    /// </summary>
    private static void DescribeDiagrams(OpenApiDocument document)
    {
        var svgs = (document.Paths ?? []).Values.SelectMany(p => p.Operations?.Values.AsEnumerable() ?? [])
            .SelectMany(o => o.Responses?.Values.AsEnumerable() ?? [])
            .Select(r => r.Content is { } content && content.TryGetValue(DiagramRenderer.ContentType, out var svg) ? svg : null)
            .OfType<OpenApiMediaType>();
        foreach (var svg in svgs)
        {
            svg.Schema = new OpenApiSchema { Type = JsonSchemaType.String, Format = "binary", Description = "An SVG document." };
        }
    }

    /// <summary>History event types are strings in the store (an engine may add one); the document lists the ones there are.</summary>
    private static void DescribeHistoryEventTypes(OpenApiDocument document)
    {
        var types = typeof(HistoryEventTypes).GetFields(BindingFlags.Public | BindingFlags.Static)
            .Where(f => f.IsLiteral && f.FieldType == typeof(string))
            .Select(f => (JsonNode)JsonValue.Create((string)f.GetRawConstantValue()!))
            .ToList();
        var schemas = document.Components?.Schemas;
        if (schemas is null || !schemas.TryGetValue("HistoryEventView", out var view) || view is not OpenApiSchema { Properties: { } properties })
        {
            return;
        }

        schemas[HistoryEventTypeSchema] = new OpenApiSchema
        {
            Type = JsonSchemaType.String,
            Description = "What happened to the instance.",
            Enum = types,
        };
        properties["type"] = new OpenApiSchemaReference(HistoryEventTypeSchema, document);
    }

    /// <summary>waitFor is a list of instance statuses, sent separated by commas as the README does (form, not exploded).</summary>
    private static void DescribeWaitFor(OpenApiDocument document)
    {
        var parameter = Operation(document, "/instances/{id}", HttpMethod.Get)?.Parameters?.OfType<OpenApiParameter>()
            .FirstOrDefault(p => p.Name == "waitFor");
        if (parameter is null)
        {
            return;
        }

        parameter.Style = ParameterStyle.Form;
        parameter.Explode = false;
        parameter.Schema = new OpenApiSchema
        {
            Type = JsonSchemaType.Array,
            Items = new OpenApiSchemaReference("InstanceStatus", document),
            MinItems = 1,
        };
    }

    private static void Example(OpenApiDocument document, string path, HttpMethod method, string json)
    {
        if (Operation(document, path, method)?.RequestBody?.Content is { } media && media.TryGetValue("application/json", out var content))
        {
            content.Example = JsonNode.Parse(json);
        }
    }

    internal static OpenApiOperation? Operation(OpenApiDocument document, string path, HttpMethod method) =>
        document.Paths is { } paths && paths.TryGetValue(path, out var item) && item.Operations is { } operations
            && operations.TryGetValue(method, out var operation)
            ? operation
            : null;
}
