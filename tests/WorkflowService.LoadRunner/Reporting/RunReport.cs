using WorkflowService.LoadRunner.Scenarios;
using WorkflowService.RunnerBackends;

namespace WorkflowService.LoadRunner.Reporting;

/// <summary>One run of one backend's scenario set: docs/benchmarks/&lt;backend&gt;-&lt;date&gt;.json (and .md).</summary>
internal sealed record RunReport
{
    public required string Backend { get; init; }
    public required string Date { get; init; }
    public required DateTimeOffset StartedAt { get; init; }
    public DateTimeOffset FinishedAt { get; set; }
    public required string Tier { get; init; }
    public required string Command { get; init; }

    /// <summary>Completed instances stored before signal-roundtrip-table-growth; below 1,000,000 only when asked on the command line.</summary>
    public required int TableGrowthSeed { get; init; }

    /// <summary>
    /// How the runner authenticated to the service (--auth): "apikey" (a random key per run, role admin, in X-Api-Key on
    /// every request) or "none" (Authentication__Mode=None); null in reports written before the service had authentication.
    /// </summary>
    public string? Authentication { get; init; }

    /// <summary>The wake-up transport (--transport): auto or redis; null in reports written before the runner had the option.</summary>
    public string? WakeUpTransport { get; init; }

    public required Dictionary<string, string> Machine { get; init; }
    public Dictionary<string, string> Database { get; set; } = [];

    /// <summary>The indexes of the service's tables at the end of the run.</summary>
    public List<string> Indexes { get; set; } = [];
    public List<string> CounterNotes { get; set; } = [];
    public List<string> Notes { get; init; } = [];
    public List<ScenarioResult> Scenarios { get; init; } = [];

    public ScenarioResult? Find(string scenario) => Scenarios.FirstOrDefault(s => s.Scenario == scenario);
}
