namespace WorkflowService.Tests.Infrastructure;

/// <summary>What a collector must receive, as docs/operations.md lists it: the service's instruments and their units.</summary>
public static class TelemetryExpectations
{
    /// <summary>The engine's and the store's instruments (OpenTelemetry names and units), and one of ASP.NET Core's.</summary>
    public static IReadOnlyDictionary<string, string> Units { get; } = new Dictionary<string, string>
    {
        ["workflow.instances.started"] = "{instance}",
        ["workflow.signals.accepted"] = "{signal}",
        ["workflow.signals.handled"] = "{signal}",
        ["workflow.run.duration"] = "s",
        ["workflow.commit.duration"] = "s",
        ["workflow.signal.age_at_claim"] = "s",
        ["workflow.claim.batch_size"] = "{signal}",
        ["workflow.longpolls.active"] = "{request}",
        ["workflow.wakeups.requested"] = "{message}",
        ["workflow.wakeups.sent"] = "{message}",
        ["workflow.instances"] = "{instance}",
        ["workflow.events.pending"] = "{event}",
        // The relational store's, on meter WorkflowService.Store.
        ["workflow.commit.group_size"] = "{write}",
        // ASP.NET Core's own, registered by the service.
        ["http.server.request.duration"] = "s",
    };
}
