using WorkflowService.RunnerBackends;
using WorkflowService.LoadRunner.Cli;
using WorkflowService.LoadRunner.Scenarios;

namespace WorkflowService.UnitTests.Benchmarks;

/// <summary>
/// The runner's interleave command picks its load with --scenario: signal-roundtrip unless told, so that earlier command
/// lines and report names keep their meaning; callout-roundtrip on request; anything else a usage error before any run.
/// </summary>
public sealed class InterleaveCommandLineTests
{
    private static readonly DateTimeOffset Started = new(2026, 11, 28, 2, 0, 0, TimeSpan.Zero);

    [Fact]
    public async Task Interleave_loads_signal_roundtrip_unless_told_otherwise()
    {
        var (code, options) = await ParseAsync("interleave", "--backend", "postgres", "--variants", "off,at-0d1a201");

        Assert.Equal(0, code);
        Assert.Equal("signal-roundtrip", options?.InterleaveScenario);
    }

    [Theory]
    [InlineData("events-at-e14ea5e", "events", "events-at-nothex")]
    [InlineData("search-attributes-at-adb501c", "search-attributes", "search-attributes-at-nothex")]
    public async Task A_loaded_variant_can_be_built_from_an_earlier_commit(string atCommit, string current, string notACommit)
    {
        var (code, options) = await ParseAsync("interleave", "--backend", "postgres", "--variants", $"{atCommit},{current}");
        Assert.Equal(0, code);
        Assert.Equal([atCommit, current], options?.Variants);

        var (badCode, _) = await ParseAsync("interleave", "--backend", "postgres", "--variants", $"{notACommit},{current}");
        Assert.Equal(SharedCommandOptions.UsageError, badCode);
    }

    [Fact]
    public async Task Interleave_takes_the_callout_roundtrip_load()
    {
        var (code, options) = await ParseAsync("interleave", "--backend", "sqlite", "--scenario", "callout-roundtrip");

        Assert.Equal(0, code);
        Assert.Equal("callout-roundtrip", options?.InterleaveScenario);
        Assert.Equal(["off", "otlp"], options?.Variants);
    }

    [Fact]
    public async Task An_unknown_load_is_a_usage_error_and_runs_nothing()
    {
        var (code, options) = await ParseAsync("interleave", "--backend", "sqlite", "--scenario", "callout");

        Assert.Equal(SharedCommandOptions.UsageError, code);
        Assert.Null(options);
    }

    [Fact]
    public void The_default_load_keeps_its_report_name_and_another_load_is_named_in_it()
    {
        Assert.Equal("interleaved-postgres-2026-11-28-off-off-again",
            InterleavedRun.FileStem("postgres", Started, ["off", "off-again"], "signal-roundtrip"));
        Assert.Equal("interleaved-postgres-2026-11-28-off-off-again-callout-roundtrip",
            InterleavedRun.FileStem("postgres", Started, ["off", "off-again"], "callout-roundtrip"));
    }

    [Fact]
    public async Task Restarts_and_settle_are_taken_and_bounded()
    {
        var (code, options) = await ParseAsync("interleave", "--backend", "postgres", "--windows", "12", "--restarts", "3", "--settle", "1.5");
        Assert.Equal(0, code);
        Assert.Equal(3, options?.Restarts);
        Assert.Equal(TimeSpan.FromSeconds(1.5), options?.Settle);

        var (defaults, unchanged) = await ParseAsync("interleave", "--backend", "postgres");
        Assert.Equal(0, defaults);
        Assert.Equal(0, unchanged?.Restarts);
        Assert.Equal(TimeSpan.FromSeconds(6), unchanged?.Settle);

        // Every process must be measured in a round; a settle of nothing would drop deferred work from the windows.
        Assert.Equal(SharedCommandOptions.UsageError, (await ParseAsync("interleave", "--backend", "postgres", "--windows", "4", "--restarts", "4")).Code);
        Assert.Equal(SharedCommandOptions.UsageError, (await ParseAsync("interleave", "--backend", "postgres", "--restarts", "-1")).Code);
        Assert.Equal(SharedCommandOptions.UsageError, (await ParseAsync("interleave", "--backend", "postgres", "--settle", "0.1")).Code);
    }

    [Theory]
    [InlineData(16, 3, new[] { 4, 4, 4, 4 })]
    [InlineData(10, 2, new[] { 4, 3, 3 })]
    [InlineData(7, 0, new[] { 7 })]
    [InlineData(5, 4, new[] { 1, 1, 1, 1, 1 })]
    public void Restarts_split_the_rounds_into_consecutive_spans_as_even_as_they_divide(int rounds, int restarts, int[] spans)
    {
        var processes = Enumerable.Range(1, rounds).Select(round => InterleavedRun.ProcessOf(round, restarts, rounds)).ToList();

        Assert.Equal(processes.Order(), processes);
        Assert.Equal(Enumerable.Range(1, restarts + 1), processes.Distinct());
        Assert.Equal(spans, processes.GroupBy(p => p).Select(g => g.Count()));
    }

    [Fact]
    public void The_interval_holds_the_median_and_narrows_with_more_rounds()
    {
        // Ratios spread as this machine's are (±15 %) around 92 %.
        var spread = new[] { 0.78, 0.85, 0.88, 0.90, 0.91, 0.92, 0.93, 0.95, 0.97, 1.02, 1.07 };
        var (low, high) = InterleavedRun.MedianInterval([[.. spread]]);
        var (manyLow, manyHigh) = InterleavedRun.MedianInterval([[.. Enumerable.Repeat(spread, 6).SelectMany(r => r)]]);

        Assert.InRange(0.92, low, high);
        Assert.True(low >= spread[0] && high <= spread[^1]);
        Assert.InRange(0.92, manyLow, manyHigh);
        Assert.True(manyHigh - manyLow < high - low);
        Assert.Equal((low, high), InterleavedRun.MedianInterval([[.. spread]]));
    }

    [Fact]
    public void Rounds_of_one_process_are_not_resampled_as_if_independent()
    {
        // Two processes, each steady within itself, one lucky: as one pool of rounds the interval is narrow; resampled
        // by process it spans both, because which process a variant got is itself chance.
        List<double> unlucky = [0.86, 0.87, 0.88, 0.87, 0.86, 0.88], lucky = [0.96, 0.97, 0.98, 0.97, 0.96, 0.98];
        var (pooledLow, pooledHigh) = InterleavedRun.MedianInterval([[.. unlucky, .. lucky]]);
        var (low, high) = InterleavedRun.MedianInterval([unlucky, lucky]);

        Assert.True(high - low > pooledHigh - pooledLow);
        Assert.True(low <= 0.88 && high >= 0.96);
    }

    [Theory]
    [InlineData(7, "UK", 15431, "2026-01-01T00:00:07.000Z")]
    [InlineData(-1, "LATAM", 12082, "2026-12-31T23:59:59.000Z")]
    public void Business_input_carries_what_the_computed_attributes_give(int index, string region, long amount, string submittedAt)
    {
        // The values of tests/WorkflowService.Benchmarks/Definitions/signal-roundtrip-search.json for n = 7; a warm-up's
        // negative index is taken modulo, so that each instance has all three.
        var input = System.Text.Json.JsonSerializer.SerializeToElement(SignalRoundtripScenario.BusinessInput(index));

        Assert.Equal(index, input.GetProperty("n").GetInt32());
        Assert.Equal(region, input.GetProperty("region").GetString());
        Assert.Equal(amount, input.GetProperty("amount").GetInt64());
        Assert.Equal(submittedAt, input.GetProperty("submittedAt").GetString());
    }

    /// <summary>Parses a runner command line as the program does; the options it would run with, or null where it stopped.</summary>
    internal static async Task<(int Code, RunnerOptions? Options)> ParseAsync(params string[] args)
    {
        RunnerOptions? parsed = null;
        var code = await SharedCommandOptions.InvokeAsync(RunnerCommandLine.Create(new SharedCommandOptions(), options =>
        {
            parsed = options;
            return Task.FromResult(0);
        }), args);
        return (code, parsed);
    }
}
