using WorkflowService.LoadRunner.Reporting;
using WorkflowService.LoadRunner.Scenarios;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing.Processes;

namespace WorkflowService.LoadRunner.Cli;

/// <summary>What the load runner's commands do once parsed: build, run each backend's scenarios, write the reports.</summary>
internal static class LoadRuns
{
    /// <summary>Exit code 0 when every scenario of every backend was correct, 1 otherwise, 2 for a usage error.</summary>
    public static async Task<int> RunAsync(RunnerOptions options, CancellationToken cancellationToken)
    {
        if (options.Backends.Count > 0 && options.Build)
        {
            await ServiceBuild.RunAsync(options.RepositoryRoot, ServiceBuild.Service, cancellationToken);
            if (options.Shipped)
            {
                await ServiceBuild.PublishReadyToRunAsync(options.RepositoryRoot, cancellationToken);
            }
        }

        if (options.Command == "interleave")
        {
            return await new InterleavedRun(options, options.Backends[0]).RunAsync(cancellationToken) ? 0 : 1;
        }

        if (options.Command == "search")
        {
            return await new SearchBenchmark(options, options.Backends[0]).RunAsync(cancellationToken) ? 0 : 1;
        }

        if (options.Command == "events")
        {
            return await new EventsBenchmark(options, options.Backends[0]).RunAsync(cancellationToken) ? 0 : 1;
        }

        if (options.Command == "schedules")
        {
            return await new SchedulesBenchmark(options, options.Backends[0]).RunAsync(cancellationToken) ? 0 : 1;
        }

        if (options.Command == "foreach")
        {
            return await new ForEachBenchmark(options, options.Backends[0]).RunAsync(cancellationToken) ? 0 : 1;
        }

        var correct = true;
        foreach (var backend in options.Backends)
        {
            var report = await new ScenarioRunner(options, backend).RunAsync(cancellationToken);
            var (json, markdown) = ReportStore.Save(report, options.OutputDirectory, options.ReportSuffix);
            Console.WriteLine($"{backend}: wrote {markdown} and {json}");
            foreach (var failed in report.Scenarios.Where(s => !s.Correct))
            {
                correct = false;
                Console.WriteLine($"  NOT CORRECT: {failed.Name}: {failed.Failures} failures, {failed.DeadLettered} dead-lettered, {failed.StuckInstances} stuck" +
                                  (failed.FailureSamples.Count > 0 ? $" ({failed.FailureSamples[0]})" : string.Empty));
            }
        }

        if (options.Command is "compare" or "readme")
        {
            if (!File.Exists(Path.Combine(options.OutputDirectory, PredecessorBaseline.FileName)))
            {
                await Console.Error.WriteLineAsync($"{PredecessorBaseline.FileName} is missing from {options.OutputDirectory}: the comparison sets the runs beside it");
                return SharedCommandOptions.UsageError;
            }

            // The folder's README.md is its index, kept by hand; the runner writes the comparison beside it.
            var readme = Path.Combine(options.OutputDirectory, ComparisonReadme.FileName);
            await File.WriteAllTextAsync(readme, ComparisonReadme.Render(
                ReportStore.LatestFullReports(options.OutputDirectory), PredecessorBaseline.Load(options.OutputDirectory)), cancellationToken);
            Console.WriteLine($"wrote {readme}");
        }

        return correct ? 0 : 1;
    }
}
