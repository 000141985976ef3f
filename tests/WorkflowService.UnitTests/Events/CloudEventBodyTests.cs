using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.UnitTests.Events;

/// <summary>The trace context a delivery's span continues, read back from the body its commit wrote.</summary>
public sealed class CloudEventBodyTests
{
    private const string TraceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

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
}
