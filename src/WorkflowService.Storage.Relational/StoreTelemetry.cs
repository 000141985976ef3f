using System.Diagnostics;
using System.Diagnostics.Metrics;
using WorkflowService.Engine.Runtime;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// What the relational store adds to the engine's telemetry: the size of each group commit (meter
/// "WorkflowService.Store", instrument <c>workflow.commit.group_size</c>), and the same figure on the span of every
/// engine commit the group carried.
/// </summary>
internal static class StoreTelemetry
{
    public const string MeterName = "WorkflowService.Store";

    private static readonly Meter Meter = new(MeterName, typeof(StoreTelemetry).Assembly.GetName().Version?.ToString(3));

    private static readonly Histogram<int> GroupSize = Meter.CreateHistogram("workflow.commit.group_size", "{write}",
        "writes (wait points, accepted signals, claims where the database takes one writer at a time) one group commit committed in its transaction",
        tags: null, advice: new InstrumentAdvice<int> { HistogramBucketBoundaries = [1, 2, 4, 8, 16, 32, 64] });

    /// <summary>The engine's commit span a write is made in, when one is recorded; null otherwise (costs nothing then).</summary>
    public static Activity? CommitSpan() =>
        Activity.Current is { IsAllDataRequested: true, OperationName: EngineTelemetry.CommitSpanName } current && current.Source == EngineTelemetry.Source
            ? current
            : null;

    /// <summary>A group of <paramref name="size"/> writes committed.</summary>
    public static void GroupCommitted(int size) => GroupSize.Record(size);

    /// <summary>Records on <paramref name="span"/> (still open: its caller waits for the write) the size of the group its write committed in.</summary>
    public static void CommittedIn(Activity? span, int size) => span?.SetTag("workflow.commit.group_size", size);
}
