namespace WorkflowService.Testing.Processes;

/// <summary>
/// One reading of the machine's and the processes' resources. Cumulative values (CPU seconds, bytes written) are
/// subtracted between two readings; the peak working set is the service's high-water mark since it was last reset.
/// </summary>
internal sealed record ResourceSnapshot(
    double ServiceCpuSeconds,
    long ServicePeakWorkingSetBytes,
    long ServiceWorkingSetBytes,
    long ServiceStorageWriteBytes,
    double LoadClientCpuSeconds,
    double DatabaseServerCpuSeconds,
    double MachineBusyCpuSeconds)
{
    public static ResourceSnapshot Empty { get; } = new(0, 0, 0, 0, 0, 0, 0);
}
