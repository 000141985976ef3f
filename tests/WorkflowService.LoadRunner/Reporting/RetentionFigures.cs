namespace WorkflowService.LoadRunner.Reporting;

/// <summary>The figures of a scenario that runs with retention deleting in the background (GET /metrics retentionRowsDeleted).</summary>
internal static class RetentionFigures
{
    /// <summary>Rows (instances, history, signals, tasks) the retention job deleted during the measured part.</summary>
    public const string RowsDeleted = "retention rows deleted during the measured part";

    /// <summary>The same per second of the measured part.</summary>
    public const string RowsDeletedPerSecond = "retention rows deleted per second";
}
