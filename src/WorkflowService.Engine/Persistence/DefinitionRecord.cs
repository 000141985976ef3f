namespace WorkflowService.Engine.Persistence;

/// <summary>One published version of a definition.</summary>
public sealed class DefinitionRecord
{
    public required string Name { get; set; }
    public int Version { get; set; }
    public required string Json { get; set; }
    public string? Description { get; set; }
    public DateTime CreatedAt { get; set; }
}
