namespace WorkflowService.Engine.Persistence;

/// <summary>One published version of a definition.</summary>
public sealed class DefinitionRecord
{
    /// <summary>The tenant that published it ("" is the default tenant); names and versions are per tenant.</summary>
    public string Tenant { get; set; } = "";
    public required string Name { get; set; }
    public int Version { get; set; }
    public required string Json { get; set; }
    public string? Description { get; set; }
    public DateTime CreatedAt { get; set; }
}
