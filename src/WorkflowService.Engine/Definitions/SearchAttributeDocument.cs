using System.Text.Json.Serialization;

namespace WorkflowService.Engine.Definitions;

/// <summary>A search attribute as a definition declares it: its type and the expression that sets it at every commit.</summary>
public sealed class SearchAttributeDocument
{
    /// <summary>keyword, text, number, datetime or bool.</summary>
    [JsonPropertyName("type")] public string? Type { get; set; }
    /// <summary>An expression over the instance (vars, input, instance), evaluated at every commit.</summary>
    [JsonPropertyName("value")] public string? Value { get; set; }
}
