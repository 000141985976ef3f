using WorkflowService.Engine.Runtime;

namespace WorkflowService.UnitTests.Execution;

public sealed class LatencyHistogramTests
{
    [Fact]
    public void A_duration_is_counted_in_the_first_bucket_whose_bound_it_does_not_exceed_and_above_the_last_in_the_overflow()
    {
        var histogram = new LatencyHistogram();
        var bounds = LatencyHistogram.UpperBoundsMs;

        histogram.Record(-3);               // a clock step backwards: counted as no wait at all
        histogram.Record(0);
        histogram.Record(1);                // on a bound: that bucket
        histogram.Record(1.2);              // above it: the next
        histogram.Record(bounds[^1] + 1);   // past every bound: the overflow bucket

        var counts = histogram.Counts();
        Assert.Equal(bounds.Count + 1, counts.Count);
        Assert.Equal(2, counts[0]);
        Assert.Equal(1, counts[bounds.ToList().IndexOf(1)]);
        Assert.Equal(1, counts[bounds.ToList().IndexOf(2)]);
        Assert.Equal(1, counts[^1]);
        Assert.Equal(5, counts.Sum());
        Assert.Equal(0 + 0 + 1 + 1.2 + bounds[^1] + 1, histogram.SumMs, precision: 3);
    }

    [Fact]
    public void Bounds_rise_strictly()
    {
        var bounds = LatencyHistogram.UpperBoundsMs;
        Assert.All(bounds.Zip(bounds.Skip(1)), pair => Assert.True(pair.Second > pair.First, $"{pair.Second} after {pair.First}"));
    }
}
