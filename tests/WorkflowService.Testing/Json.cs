using System.Text.Json.Nodes;

namespace WorkflowService.Testing;

/// <summary>Reads the few fields scenarios check in the service's answers.</summary>
internal static class Json
{
    public static Guid Id(JsonNode? node, string property = "id") =>
        Guid.Parse(node?[property]?.GetValue<string>() ?? throw new InvalidOperationException($"the answer has no '{property}'"));

    public static string? Text(JsonNode? node) => node?.GetValueKind() == System.Text.Json.JsonValueKind.String ? node.GetValue<string>() : node?.ToJsonString();

    /// <summary>Null when the instance completed; otherwise what it is instead.</summary>
    public static string? NotCompleted(JsonObject instance) =>
        Text(instance["status"]) == "Completed" ? null : $"instance ended {Text(instance["status"])}: {Text(instance["error"])}";
}
