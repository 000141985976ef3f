namespace WorkflowService.Engine.Runtime;

/// <summary>
/// Counts of durations in fixed buckets (milliseconds, finer where hints land and coarser where only the poll reaches),
/// recorded lock-free and read as totals since the node started: a report takes two readings and subtracts them, and a
/// percentile is the bucket it falls in. Exported as well through System.Diagnostics.Metrics by its owner.
/// </summary>
public sealed class LatencyHistogram
{
    /// <summary>Each bucket's upper bound (inclusive), in milliseconds; one more bucket holds everything above the last.</summary>
    public static readonly IReadOnlyList<double> UpperBoundsMs =
    [
        0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100, 150, 200, 300, 500, 750, 1_000, 1_500, 2_000, 3_000, 5_000, 10_000, 30_000, 60_000,
    ];

    private readonly long[] _counts = new long[UpperBoundsMs.Count + 1];
    private long _sumMicroseconds;

    public void Record(double milliseconds)
    {
        var value = Math.Max(0, milliseconds);
        var bucket = 0;
        while (bucket < UpperBoundsMs.Count && value > UpperBoundsMs[bucket])
        {
            bucket++;
        }

        Interlocked.Increment(ref _counts[bucket]);
        Interlocked.Add(ref _sumMicroseconds, (long)(value * 1000));
    }

    /// <summary>Counts per bucket so far (the last one: above the last bound).</summary>
    public IReadOnlyList<long> Counts()
    {
        var counts = new long[_counts.Length];
        for (var i = 0; i < counts.Length; i++)
        {
            counts[i] = Volatile.Read(ref _counts[i]);
        }

        return counts;
    }

    /// <summary>The sum of every recorded duration so far, in milliseconds.</summary>
    public double SumMs => Interlocked.Read(ref _sumMicroseconds) / 1000.0;
}
