using WorkflowService.LoadRunner.Cli;
using WorkflowService.LoadRunner.Scenarios;
using WorkflowService.RunnerBackends;

namespace WorkflowService.UnitTests.Benchmarks;

/// <summary>
/// The runner's schedules and foreach commands: the issues' sizes unless told (1,000 schedules for 3 minutes, both
/// spreads; 20 instances of 100 items), a smaller run on request, and a size out of range a usage error before any run.
/// </summary>
public sealed class ScheduleAndForEachCommandLineTests
{
    [Fact]
    public async Task Schedules_runs_the_issue_size_on_both_spreads_unless_told()
    {
        var (code, options) = await ParseAsync("schedules", "--backend", "postgres");

        Assert.Equal(0, code);
        Assert.Equal(1000, options?.ScheduleCount);
        Assert.Equal(3, options?.ScheduleMinutes);
        Assert.Equal([SchedulesBenchmark.OnTheMinute, SchedulesBenchmark.Staggered], options?.ScheduleSpreads);
    }

    [Fact]
    public async Task Schedules_takes_a_smaller_run_on_one_spread()
    {
        var (code, options) = await ParseAsync("schedules", "--backend", "sqlite", "--schedules", "20", "--minutes", "1", "--spread", "staggered", "--windows", "3", "--window-ops", "500");

        Assert.Equal(0, code);
        Assert.Equal(20, options?.ScheduleCount);
        Assert.Equal([SchedulesBenchmark.Staggered], options?.ScheduleSpreads);
        Assert.Equal(3, options?.Windows);
    }

    [Fact]
    public async Task Foreach_runs_100_items_per_instance_unless_told()
    {
        var (code, options) = await ParseAsync("foreach", "--backend", "postgres", "--instances", "2");

        Assert.Equal(0, code);
        Assert.Equal(2, options?.ForEachInstances);
        Assert.Equal(100, options?.ForEachItems);
    }

    [Theory]
    [InlineData("schedules", "--schedules", "0")]
    [InlineData("schedules", "--spread", "hourly")]
    [InlineData("foreach", "--items", "1001")]
    public async Task A_size_out_of_range_is_a_usage_error_and_runs_nothing(string command, string option, string value)
    {
        var (code, options) = await ParseAsync(command, "--backend", "sqlite", option, value);

        Assert.Equal(SharedCommandOptions.UsageError, code);
        Assert.Null(options);
    }

    private static Task<(int Code, RunnerOptions? Options)> ParseAsync(params string[] args) => InterleaveCommandLineTests.ParseAsync(args);
}
