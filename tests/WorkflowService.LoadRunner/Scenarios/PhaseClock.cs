using System.Diagnostics;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>Times one operation's phases back to back: each <see cref="Lap"/> closes the phase that ran since the previous one.</summary>
internal sealed class PhaseClock
{
    private readonly long _start = Stopwatch.GetTimestamp();
    private readonly Dictionary<string, double> _phases = new(StringComparer.Ordinal);
    private long _last;

    public PhaseClock() => _last = _start;

    public double ElapsedMs => Stopwatch.GetElapsedTime(_start).TotalMilliseconds;

    /// <summary>Closes the running phase under <paramref name="phase"/> (adding to it if it ran before).</summary>
    public void Lap(string phase)
    {
        var now = Stopwatch.GetTimestamp();
        _phases[phase] = _phases.GetValueOrDefault(phase) + Stopwatch.GetElapsedTime(_last, now).TotalMilliseconds;
        _last = now;
    }

    /// <summary>Records a duration measured otherwise (not a lap: the running phase goes on).</summary>
    public void Record(string phase, double milliseconds) => _phases[phase] = milliseconds;

    /// <summary>Ends the operation: ok when <paramref name="problem"/> is null.</summary>
    public OperationSample Finish(string? problem = null) => new(problem is null, ElapsedMs, _phases, problem);
}
