using System.Buffers;
using System.Net.Mime;
using System.Text;
using System.Text.Json;
using CloudNative.CloudEvents;
using CloudNative.CloudEvents.SystemTextJson;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Events;

/// <summary>
/// An event as it is posted: a CloudEvent 1.0 in structured JSON, written with the CloudEvents SDK. Its extensions name
/// the instance (<c>workflowinstanceid</c>), its definition and version, business key and tenant, and carry the W3C trace
/// context of the commit (<c>traceparent</c>), so a receiver can join the trace.
/// </summary>
public static class CloudEventBody
{
    public const string InstanceIdExtension = "workflowinstanceid";
    public const string DefinitionExtension = "workflowdefinition";
    public const string VersionExtension = "workflowversion";
    public const string BusinessKeyExtension = "workflowbusinesskey";
    public const string TenantExtension = "workflowtenant";

    /// <summary>The CloudEvents Distributed Tracing extension's attribute: the W3C trace context of the commit.</summary>
    public const string TraceParentExtension = "traceparent";

    private static readonly JsonEventFormatter Formatter = new();

    /// <summary>
    /// The event <paramref name="type"/> of <paramref name="instance"/> that <paramref name="entry"/> records. Its data holds the
    /// instance's identity and state and the entry's own fields; a custom event's data is what its step emitted.
    /// </summary>
    public static string Build(Guid eventId, string type, WorkflowInstance instance, HistoryEvent entry, string? traceParent, JsonElement? customData)
    {
        ArgumentNullException.ThrowIfNull(instance);
        ArgumentNullException.ThrowIfNull(entry);
        var cloudEvent = new CloudEvent(CloudEventsSpecVersion.V1_0)
        {
            Id = eventId.ToString(),
            Type = type,
            Source = new Uri($"/instances/{instance.Id}", UriKind.Relative),
            Subject = entry.StepId,
            Time = new DateTimeOffset(DateTime.SpecifyKind(entry.At, DateTimeKind.Utc)),
            DataContentType = MediaTypeNames.Application.Json,
            Data = customData ?? Data(instance, entry),
        };
        cloudEvent[InstanceIdExtension] = instance.Id.ToString();
        cloudEvent[DefinitionExtension] = instance.DefinitionName;
        cloudEvent[VersionExtension] = instance.DefinitionVersion.ToString(System.Globalization.CultureInfo.InvariantCulture);
        cloudEvent[TenantExtension] = instance.Tenant;
        if (instance.BusinessKey is { } businessKey)
        {
            cloudEvent[BusinessKeyExtension] = businessKey;
        }

        if (traceParent is not null)
        {
            cloudEvent[TraceParentExtension] = traceParent;
        }

        return Encoding.UTF8.GetString(Formatter.EncodeStructuredModeMessage(cloudEvent, out _).Span);
    }

    /// <summary>
    /// The <c>traceparent</c> a body carries (the commit's trace context), or null: read from its top-level properties
    /// without parsing the data.
    /// </summary>
    public static string? TraceParentOf(string body)
    {
        ArgumentNullException.ThrowIfNull(body);
        var json = new Utf8JsonReader(Encoding.UTF8.GetBytes(body));
        try
        {
            if (!json.Read() || json.TokenType != JsonTokenType.StartObject)
            {
                return null;
            }

            while (json.Read() && json.TokenType == JsonTokenType.PropertyName)
            {
                var wanted = json.ValueTextEquals(TraceParentExtension);
                json.Read();
                if (wanted)
                {
                    return json.TokenType == JsonTokenType.String ? json.GetString() : null;
                }

                json.Skip();
            }
        }
        catch (JsonException)
        {
            // Not JSON (never written so by the outbox): no trace to continue.
        }

        return null;
    }

    /// <summary>A standard event's data: the instance, then the fields its history entry recorded.</summary>
    private static JsonElement Data(WorkflowInstance instance, HistoryEvent entry)
    {
        var buffer = new ArrayBufferWriter<byte>(256);
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("instanceId", instance.Id);
            json.WriteString("definition", instance.DefinitionName);
            json.WriteNumber("version", instance.DefinitionVersion);
            json.WriteString("status", instance.Status.ToString());
            if (instance.BusinessKey is { } key)
            {
                json.WriteString("businessKey", key);
            }

            if (entry.StepId is { } step)
            {
                json.WriteString("step", step);
            }

            if (entry.Actor is { } actor)
            {
                json.WriteString("actor", actor);
            }

            switch (entry.Type)
            {
                case HistoryEventTypes.InstanceCompleted when instance.OutputJson is { } output:
                    json.WritePropertyName("output");
                    json.WriteRawValue(output, skipInputValidation: true);
                    break;
                case HistoryEventTypes.InstanceFailed or HistoryEventTypes.InstanceFaulted when instance.Error is { } error:
                    json.WriteString("error", error);
                    break;
            }

            if (entry.DataJson is { } detail && JsonDocument.Parse(detail) is var parsed)
            {
                using (parsed)
                {
                    if (parsed.RootElement.ValueKind == JsonValueKind.Object)
                    {
                        foreach (var property in parsed.RootElement.EnumerateObject())
                        {
                            if (property.Value.ValueKind != JsonValueKind.Null && !Written(property.Name))
                            {
                                property.WriteTo(json);
                            }
                        }
                    }
                }
            }

            json.WriteEndObject();
        }

        using var document = JsonDocument.Parse(buffer.WrittenMemory);
        return document.RootElement.Clone();
    }

    private static bool Written(string name) =>
        name is "instanceId" or "definition" or "version" or "status" or "businessKey" or "step" or "actor" or "output" or "error";
}
