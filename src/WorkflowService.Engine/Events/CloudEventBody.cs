using System.Buffers;
using System.Net.Mime;
using System.Text;
using System.Text.Json;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Events;

/// <summary>
/// An event as it is posted: a CloudEvent 1.0 in structured JSON (the unit tests read bodies back with the CloudEvents
/// SDK's formatter, which validates them). Its extensions name
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

    /// <summary>
    /// The event <paramref name="type"/> of <paramref name="instance"/> that <paramref name="entry"/> records. Its data holds the
    /// instance's identity and state and the entry's own fields; a custom event's data is what its step emitted. Written in one
    /// pass (the attributes, then the data into the same writer): a commit builds one per event, on the path of the request.
    /// </summary>
    public static string Build(Guid eventId, string type, WorkflowInstance instance, HistoryEvent entry, string? traceParent, JsonElement? customData)
    {
        ArgumentNullException.ThrowIfNull(type);
        ArgumentNullException.ThrowIfNull(instance);
        ArgumentNullException.ThrowIfNull(entry);
        var buffer = new ArrayBufferWriter<byte>(1024);
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("specversion", "1.0");
            json.WriteString("id", eventId);
            json.WriteString("type", type);
            json.WriteString("source", $"/instances/{instance.Id}");
            if (entry.StepId is { } subject)
            {
                json.WriteString("subject", subject);
            }

            // RFC 3339 in UTC, as the CloudEvents JSON format asks.
            json.WriteString("time", DateTime.SpecifyKind(entry.At, DateTimeKind.Utc));
            json.WriteString("datacontenttype", MediaTypeNames.Application.Json);
            json.WriteString(InstanceIdExtension, instance.Id);
            json.WriteString(DefinitionExtension, instance.DefinitionName);
            json.WriteString(VersionExtension, instance.DefinitionVersion.ToString(System.Globalization.CultureInfo.InvariantCulture));
            json.WriteString(TenantExtension, instance.Tenant);
            // A key with a character no CloudEvents string may hold (a control character, say) is in the data only.
            if (instance.BusinessKey is { } businessKey && IsAttributeText(businessKey))
            {
                json.WriteString(BusinessKeyExtension, businessKey);
            }

            if (traceParent is not null)
            {
                json.WriteString(TraceParentExtension, traceParent);
            }

            if (customData is not { } custom)
            {
                json.WritePropertyName("data");
                WriteData(json, instance, entry);
            }
            else if (custom.ValueKind != JsonValueKind.Undefined)
            {
                // An emit step without data sends an event without it.
                json.WritePropertyName("data");
                custom.WriteTo(json);
            }

            json.WriteEndObject();
        }

        return Encoding.UTF8.GetString(buffer.WrittenSpan);
    }

    /// <summary>
    /// Whether <paramref name="value"/> may be a CloudEvents string: well-formed UTF-16 without control characters
    /// (U+0000 to U+001F, U+007F to U+009F) or noncharacters, as the specification's type system asks.
    /// </summary>
    public static bool IsAttributeText(string value)
    {
        ArgumentNullException.ThrowIfNull(value);
        var rest = value.AsSpan();
        while (!rest.IsEmpty)
        {
            if (Rune.DecodeFromUtf16(rest, out var rune, out var used) != OperationStatus.Done)
            {
                return false;
            }

            // Control characters are Unicode's Cc (C0, DEL, C1); noncharacters are U+FDD0 to U+FDEF and each plane's last two.
            var code = rune.Value;
            if (Rune.IsControl(rune) || code is >= 0xFDD0 and <= 0xFDEF || (code & 0xFFFE) == 0xFFFE)
            {
                return false;
            }

            rest = rest[used..];
        }

        return true;
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
    private static void WriteData(Utf8JsonWriter json, WorkflowInstance instance, HistoryEvent entry)
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
                // The engine's own JSON, written as it stored it.
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

    private static bool Written(string name) =>
        name is "instanceId" or "definition" or "version" or "status" or "businessKey" or "step" or "actor" or "output" or "error";
}
