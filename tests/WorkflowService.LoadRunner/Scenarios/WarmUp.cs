using System.Diagnostics;
using System.Runtime;
using WorkflowService.Testing;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>What the unmeasured warm-up did before a scenario's measured part.</summary>
/// <param name="Ops">Operations run (the backend's counters cover them too).</param>
/// <param name="Duration">Its wall-clock time.</param>
/// <param name="Rounds">Rounds of at least <see cref="WarmUp.Round"/> each (1 where the scenario warms up once).</param>
/// <param name="LastRoundJitShare">JIT time in the last round over that round's wall-clock time; null where not watched.</param>
internal sealed record WarmUpResult(int Ops, TimeSpan Duration, int Rounds, double? LastRoundJitShare)
{
    /// <summary>Whether the watched share fell to <see cref="WarmUp.SettledShare"/> or below before <see cref="WarmUp.Limit"/>.</summary>
    public bool Settled => LastRoundJitShare <= WarmUp.SettledShare;
}

/// <summary>
/// The unmeasured warm-up before a scenario's measured part. A fresh .NET process compiles its hot code several times
/// (tier 0, instrumented, optimised tier 1) and keeps doing so for tens of seconds under load: on two cores that JIT work
/// took a third of the service's CPU through a 20-second sustained run. A service runs for days, so where timing is the
/// point (<see cref="Scenario.SettlesJit"/>) the warm-up repeats in rounds until the processes doing the scenario's work
/// (the service, read from GET /metrics, and this runner: the load client, or the ceiling loop itself) spend at most
/// <see cref="SettledShare"/> of a round compiling, bounded by <see cref="Limit"/>. The report gives every scenario's
/// warm-up and the JIT time left inside its measured part.
/// </summary>
internal static class WarmUp
{
    /// <summary>A round repeats the scenario's warm-up for at least this long.</summary>
    public static readonly TimeSpan Round = TimeSpan.FromSeconds(2);

    /// <summary>Settled: JIT time in a round at most this share of the round's wall-clock time (of one core).</summary>
    public const double SettledShare = 0.02;

    /// <summary>The bound on the whole warm-up; a scenario that has not settled by then is measured anyway, and says so.</summary>
    public static readonly TimeSpan Limit = TimeSpan.FromSeconds(90);

    public static async Task<WarmUpResult> RunAsync(Scenario scenario, ScenarioContext context, WorkflowClient? client)
    {
        var ct = context.Cancellation;
        var clock = Stopwatch.StartNew();
        if (!scenario.SettlesJit)
        {
            await scenario.WarmUpAsync(context);
            return new WarmUpResult(scenario.WarmUpOps, clock.Elapsed, 1, null);
        }

        var ops = 0;
        var rounds = 0;
        double share;
        do
        {
            var jitBefore = await JitMsAsync(client, ct);
            var round = Stopwatch.StartNew();
            do
            {
                await scenario.WarmUpAsync(context);
                ops += scenario.WarmUpOps;
            }
            while (round.Elapsed < Round);

            rounds++;
            share = (await JitMsAsync(client, ct) - jitBefore) / round.Elapsed.TotalMilliseconds;
            if (share <= SettledShare)
            {
                return new WarmUpResult(ops, clock.Elapsed, rounds, share);
            }
        }
        while (clock.Elapsed < Limit);

        return new WarmUpResult(ops, clock.Elapsed, rounds, share);
    }

    /// <summary>How often <see cref="WaitForQuietJitAsync"/> reads the JIT time, and how long it waits at most.</summary>
    public static readonly TimeSpan QuietStep = TimeSpan.FromMilliseconds(250);

    public static readonly TimeSpan QuietLimit = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Right before the measured part: waits (bounded by <see cref="QuietLimit"/>) until the JIT time of the service and
    /// this runner stops growing over one <see cref="QuietStep"/>. The reads between the warm-up and the measurement
    /// (dead letters, counters) run code paths of their own; the runtime postpones pending optimised recompilations
    /// while new code is compiled, so without this pause they would land in the measured part, which for the 16-operation
    /// scenarios lasts less than a fifth of a second. Returns how long it waited.
    /// </summary>
    public static async Task<TimeSpan> WaitForQuietJitAsync(WorkflowClient? client, CancellationToken cancellationToken)
    {
        var clock = Stopwatch.StartNew();
        var last = await JitMsAsync(client, cancellationToken);
        while (clock.Elapsed < QuietLimit)
        {
            await Task.Delay(QuietStep, cancellationToken);
            var now = await JitMsAsync(client, cancellationToken);
            if (now == last)
            {
                break;
            }

            last = now;
        }

        return clock.Elapsed;
    }

    /// <summary>JIT milliseconds so far of this runner and, when it runs, the service.</summary>
    public static async Task<double> JitMsAsync(WorkflowClient? client, CancellationToken cancellationToken) =>
        JitInfo.GetCompilationTime().TotalMilliseconds
        + (client is null ? 0 : await client.GetJitCompilationMsAsync(cancellationToken));
}
