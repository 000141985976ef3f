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
