namespace WorkflowService.LoadRunner.Reporting;

/// <summary>Average and nearest-rank percentiles of a set of durations, in ms.</summary>
internal sealed record LatencySummary(int Count, double Avg, double P50, double P95, double P99, double Max)
{
    public static LatencySummary? From(IEnumerable<double> values)
    {
        var sorted = values.Where(v => !double.IsNaN(v)).Order().ToArray();
        if (sorted.Length == 0)
        {
            return null;
        }

        double P(double p) => sorted[Math.Clamp((int)Math.Ceiling(p * sorted.Length) - 1, 0, sorted.Length - 1)];
        return new LatencySummary(sorted.Length, Round(sorted.Average()), Round(P(0.50)), Round(P(0.95)), Round(P(0.99)), Round(sorted[^1]));
    }

    private static double Round(double value) => Math.Round(value, 2);
}
