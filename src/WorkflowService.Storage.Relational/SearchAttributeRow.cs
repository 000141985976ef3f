namespace WorkflowService.Storage.Relational;

/// <summary>A row of wf_search_attributes: a tenant's attribute name, its type and the slot column that holds its values.</summary>
public sealed class SearchAttributeRow
{
    public required string Tenant { get; set; }
    public required string Name { get; set; }
    /// <summary>The type's name as a definition writes it (keyword, text, number, datetime, bool).</summary>
    public required string Type { get; set; }
    public required string Slot { get; set; }
}
