namespace WorkflowService.Storage.Relational;

/// <summary>
/// The one row that says which releases may run on a database: <see cref="Version"/> is the oldest release schema that
/// still works on it (releases before migrations read this column and require their own schema there), and
/// <see cref="NewestVersion"/> the newest step applied. The steps themselves are in Migrations/.
/// </summary>
public sealed class SchemaVersion
{
    public int Id { get; set; } = 1;
    public int Version { get; set; }
    public int NewestVersion { get; set; }
    public DateTime AppliedAt { get; set; }
}

/// <summary>A named lease (wf_leases): the node that holds it runs the job of that name until <see cref="UntilMs"/>.</summary>
public sealed class JobLease
{
    public string Name { get; set; } = string.Empty;
    public string Owner { get; set; } = string.Empty;
    public long UntilMs { get; set; }
}
