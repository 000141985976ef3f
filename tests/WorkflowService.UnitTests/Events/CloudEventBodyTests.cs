using System.Net.Mime;
using System.Text.Json.Nodes;
using System.Text;
using System.Text.Json;
using CloudNative.CloudEvents;
using CloudNative.CloudEvents.SystemTextJson;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.UnitTests.Events;

/// <summary>
/// The bodies the outbox writes, read back with the CloudEvents SDK's formatter (which validates them), and the trace
/// context a delivery's span continues, read back from the body its commit wrote.
/// </summary>
public sealed class CloudEventBodyTests
{
    private const string TraceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    private static readonly JsonEventFormatter Formatter = new();

    private static CloudEvent Decode(string body) =>
        Formatter.DecodeStructuredModeMessage(Encoding.UTF8.GetBytes(body), new ContentType("application/cloudevents+json"), null);

    private static readonly WorkflowInstance Instance = new()
    {
        Id = Guid.CreateVersion7(), DefinitionName = "claims", DefinitionVersion = 2, Tenant = "", Status = InstanceStatus.Running,
    };

    private static string Body(string? traceParent, string? data = null) => CloudEventBody.Build(Guid.CreateVersion7(), "claim.approved", Instance,
        new HistoryEvent { InstanceId = Instance.Id, At = DateTime.UtcNow, Type = HistoryEventTypes.EventEmitted },
        traceParent, data is null ? null : System.Text.Json.JsonDocument.Parse(data).RootElement);

    [Fact]
    public void The_commits_trace_context_is_read_back_from_the_body() =>
        Assert.Equal(TraceParent, CloudEventBody.TraceParentOf(Body(TraceParent)));

    [Fact]
    public void A_body_written_outside_a_trace_has_none_even_when_its_data_holds_one() =>
        Assert.Null(CloudEventBody.TraceParentOf(Body(null, $$"""{ "traceparent": "{{TraceParent}}", "nested": { "traceparent": "x" } }""")));

    [Theory]
    [InlineData("")]
    [InlineData("[]")]
    [InlineData("""{ "traceparent": 7 }""")]
    public void A_body_without_a_readable_one_has_none(string body) => Assert.Null(CloudEventBody.TraceParentOf(body));

    [Fact]
    public void A_standard_event_is_a_valid_cloud_event_with_the_instance_in_its_extensions_and_data()
    {
        var instance = new WorkflowInstance
        {
            Id = Guid.CreateVersion7(), DefinitionName = "claims", DefinitionVersion = 3, Tenant = "acme", Status = InstanceStatus.Completed,
            BusinessKey = "claim-7", OutputJson = """{"approved":true,"amount":12.5}""",
        };
        var at = new DateTime(2026, 11, 29, 9, 14, 28, 35, DateTimeKind.Utc).AddTicks(8590);
        var entry = new HistoryEvent
        {
            InstanceId = instance.Id, At = at, Type = HistoryEventTypes.InstanceCompleted, StepId = "done", Actor = "reviewer",
            DataJson = """{"reason":"fine","status":"ignored","empty":null}""",
        };
        var id = Guid.CreateVersion7();

        var decoded = Decode(CloudEventBody.Build(id, EventTypes.InstanceCompleted, instance, entry, TraceParent, null));

        Assert.Equal(CloudEventsSpecVersion.V1_0, decoded.SpecVersion);
        Assert.Equal((id.ToString(), EventTypes.InstanceCompleted, $"/instances/{instance.Id}", "done", MediaTypeNames.Application.Json),
            (decoded.Id, decoded.Type, decoded.Source?.ToString(), decoded.Subject, decoded.DataContentType));
        Assert.Equal(new DateTimeOffset(at), decoded.Time);
        Assert.Equal((instance.Id.ToString(), "claims", "3", "acme", "claim-7", TraceParent),
            ((string?)decoded[CloudEventBody.InstanceIdExtension], (string?)decoded[CloudEventBody.DefinitionExtension],
                (string?)decoded[CloudEventBody.VersionExtension], (string?)decoded[CloudEventBody.TenantExtension],
                (string?)decoded[CloudEventBody.BusinessKeyExtension], (string?)decoded[CloudEventBody.TraceParentExtension]));
        var data = Assert.IsType<JsonElement>(decoded.Data);
        Assert.Equal((instance.Id.ToString(), "claims", 3, "Completed", "claim-7", "done", "reviewer", "fine"),
            (data.GetProperty("instanceId").GetString(), data.GetProperty("definition").GetString(), data.GetProperty("version").GetInt32(),
                data.GetProperty("status").GetString(), data.GetProperty("businessKey").GetString(), data.GetProperty("step").GetString(),
                data.GetProperty("actor").GetString(), data.GetProperty("reason").GetString()));
        Assert.True(data.GetProperty("output").GetProperty("approved").GetBoolean());
        Assert.Equal(12.5m, data.GetProperty("output").GetProperty("amount").GetDecimal());
        // A field the entry recorded never overrides the instance's own, and a null one is left out.
        Assert.False(data.TryGetProperty("empty", out _));
        Assert.Single(data.EnumerateObject(), p => p.Name == "status");
    }

    [Fact]
    public void A_custom_event_carries_its_data_as_emitted_and_leaves_out_what_it_lacks()
    {
        var decoded = Decode(Body(null, """{ "claim": "C-7", "lines": [1, 2], "note": "é \" <" }"""));

        Assert.Equal("claim.approved", decoded.Type);
        Assert.Null(decoded.Subject);
        Assert.Null(decoded[CloudEventBody.BusinessKeyExtension]);
        Assert.Null(decoded[CloudEventBody.TraceParentExtension]);
        Assert.Equal("", (string?)decoded[CloudEventBody.TenantExtension]);
        var data = Assert.IsType<JsonElement>(decoded.Data);
        Assert.Equal(("C-7", 2, "é \" <"), (data.GetProperty("claim").GetString(), data.GetProperty("lines").GetArrayLength(), data.GetProperty("note").GetString()));
    }

    [Fact]
    public void A_body_is_what_the_sdk_would_write_for_the_same_event()
    {
        var instance = new WorkflowInstance
        {
            Id = Guid.CreateVersion7(), DefinitionName = "claims", DefinitionVersion = 1, Tenant = "", Status = InstanceStatus.Running,
            BusinessKey = "<claim & \"7\">",
        };
        var entry = new HistoryEvent { InstanceId = instance.Id, At = DateTime.UtcNow, Type = HistoryEventTypes.InstanceStarted, StepId = "wait" };
        var id = Guid.CreateVersion7();
        var ours = CloudEventBody.Build(id, EventTypes.InstanceStarted, instance, entry, TraceParent, null);

        var decoded = Decode(ours);
        var sdk = new CloudEvent(CloudEventsSpecVersion.V1_0)
        {
            Id = id.ToString(), Type = EventTypes.InstanceStarted, Source = new Uri($"/instances/{instance.Id}", UriKind.Relative), Subject = "wait",
            Time = new DateTimeOffset(entry.At), DataContentType = MediaTypeNames.Application.Json, Data = decoded.Data,
        };
        foreach (var (name, value) in new[]
        {
            (CloudEventBody.InstanceIdExtension, instance.Id.ToString()), (CloudEventBody.DefinitionExtension, "claims"),
            (CloudEventBody.VersionExtension, "1"), (CloudEventBody.TenantExtension, ""), (CloudEventBody.BusinessKeyExtension, instance.BusinessKey),
            (CloudEventBody.TraceParentExtension, TraceParent),
        })
        {
            sdk[name] = value;
        }

        var written = Encoding.UTF8.GetString(Formatter.EncodeStructuredModeMessage(sdk, out _).Span);
        Assert.True(JsonNode.DeepEquals(JsonNode.Parse(written), JsonNode.Parse(ours)), $"ours: {ours}\nthe SDK's: {written}");
    }

    [Fact]
    public void An_emitted_event_without_data_has_none()
    {
        var body = CloudEventBody.Build(Guid.CreateVersion7(), "claim.noted", Instance,
            new HistoryEvent { InstanceId = Instance.Id, At = DateTime.UtcNow, Type = HistoryEventTypes.EventEmitted }, null, default(JsonElement));

        Assert.Null(Decode(body).Data);
        Assert.False(JsonDocument.Parse(body).RootElement.TryGetProperty("data", out _));
    }

    [Fact]
    public void A_business_key_no_cloud_events_string_may_hold_is_left_to_the_data()
    {
        var instance = new WorkflowInstance
        {
            Id = Guid.CreateVersion7(), DefinitionName = "claims", DefinitionVersion = 1, Tenant = "", Status = InstanceStatus.Running,
            BusinessKey = "claim\n7",
        };
        var decoded = Decode(CloudEventBody.Build(Guid.CreateVersion7(), EventTypes.InstanceStarted, instance,
            new HistoryEvent { InstanceId = instance.Id, At = DateTime.UtcNow, Type = HistoryEventTypes.InstanceStarted }, null, null));

        Assert.Null(decoded[CloudEventBody.BusinessKeyExtension]);
        Assert.Equal("claim\n7", Assert.IsType<JsonElement>(decoded.Data).GetProperty("businessKey").GetString());
    }

    [Fact]
    public void Attribute_text_follows_the_cloud_events_type_system()
    {
        foreach (var allowed in new[] { "claim-7 été 😀", "" })
        {
            Assert.True(CloudEventBody.IsAttributeText(allowed), allowed);
        }

        // Control characters (C0, DEL, C1), a lone surrogate, noncharacters.
        foreach (var refused in new[] { "a\u0000b", "tab\there", "del\u007f", "c1\u0085", "lone \ud800 half", "non\ufffe", "non\ufdd0" })
        {
            Assert.False(CloudEventBody.IsAttributeText(refused), refused);
        }
    }
}
