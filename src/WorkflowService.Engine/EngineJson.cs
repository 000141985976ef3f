using System.Text.Json;
using System.Text.Json.Serialization;

namespace WorkflowService.Engine;

/// <summary>
/// How the engine writes the JSON it stores for itself (history data, call-out and child-start requests, a child's
/// result): web names, nulls left out. The compiler's strict options, which refuse unknown fields of a definition the
/// user wrote, are its own (<see cref="Definitions.DefinitionCompiler.JsonOptions"/>).
/// </summary>
public static class EngineJson
{
    public static readonly JsonSerializerOptions Options = new(JsonSerializerDefaults.Web)
    {
        DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,
    };
}
