namespace WorkflowService.Hosting;

/// <summary>How this node learns that signals became due ("WakeUp" section).</summary>
public sealed class WakeUpOptions
{
    public const string Section = "WakeUp";
    public static readonly string[] Transports = ["Auto", "InProcess", "PostgresNotify"];

    /// <summary>
    /// Auto (the store's own: InProcess for Sqlite, PostgresNotify for PostgreSql), InProcess (one node only), or
    /// PostgresNotify (LISTEN/NOTIFY across nodes; needs the PostgreSql store).
    /// </summary>
    public string Transport { get; set; } = "Auto";
}
