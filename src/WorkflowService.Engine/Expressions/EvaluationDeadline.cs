using System.Diagnostics;
using Jint;

namespace WorkflowService.Engine.Expressions;

/// <summary>
/// The wall-clock budget of one evaluation, checked before every statement. Jint's own <c>TimeoutInterval</c> is
/// amortized (checked every so many statements), which is sound only while each statement is short: a few regular
/// expression matches, each under the regex timeout, ran for many times the budget between two of its checks.
/// The scope arms it around each evaluation (<see cref="Begin"/>, <see cref="End"/>); disarmed, it never fires, so host
/// calls between evaluations (parsing variables, serialising them at a wait) are not measured against a stale deadline.
/// </summary>
internal sealed class EvaluationDeadline(TimeSpan budget) : Constraint
{
    private readonly long _budgetTicks = (long)(budget.TotalSeconds * Stopwatch.Frequency);
    private long _deadline = long.MaxValue;
    private bool _endsWithTheRun;

    /// <summary>Arms the budget, ending no later than <paramref name="runEnds"/> (a <see cref="Stopwatch"/> timestamp).</summary>
    public void Begin(long runEnds = long.MaxValue)
    {
        var now = Stopwatch.GetTimestamp();
        var own = now + _budgetTicks;
        _endsWithTheRun = runEnds < own;
        _deadline = _endsWithTheRun ? Math.Max(runEnds, now) : own;
    }

    public void End() => _deadline = long.MaxValue;

    public override void Check()
    {
        if (Stopwatch.GetTimestamp() > _deadline)
        {
            throw _endsWithTheRun ? new RunBudgetExceededException() : new TimeoutException("the expression exceeded its time limit");
        }
    }

    /// <summary>Jint resets constraints as it enters and leaves the engine; this one is armed by the scope instead.</summary>
    public override void Reset()
    {
    }
}

/// <summary>
/// An evaluation reached the end of its run's budget (<c>Engine:MaxRunTime</c>) rather than its own limit: the run
/// fails as a whole, past any error path of the step.
/// </summary>
public sealed class RunBudgetExceededException() : Exception("the run exceeded its time budget");
