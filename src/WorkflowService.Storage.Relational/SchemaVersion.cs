namespace WorkflowService.Storage.Relational;

/// <summary>The one row that says which schema a database holds, so a build never runs on a schema it does not know.</summary>
public sealed class SchemaVersion
{
    /// <summary>The schema this build creates and expects. Raise it with every change to the model.</summary>
    public const int Current = 5;

    public int Id { get; set; } = 1;
    public int Version { get; set; }
    public DateTime AppliedAt { get; set; }
}
