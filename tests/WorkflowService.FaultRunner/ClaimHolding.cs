using System.Diagnostics;
using WorkflowService.RunnerBackends;

namespace WorkflowService.FaultRunner;

/// <summary>Times a fault to strike a node while it holds claims, so that the fault has claims to orphan.</summary>
internal static class ClaimHolding
{
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(30);

    /// <summary>
    /// How long a statement the node sent just before the cut may still take to land. The cut stops the node's bytes,
    /// not a statement the database already received: a commit in flight finishes after the cut and releases its claim.
    /// </summary>
    private static readonly TimeSpan InFlight = TimeSpan.FromMilliseconds(300);

    /// <summary>
    /// Applies <paramref name="cut"/> to <paramref name="node"/>, then reads from the store the claims it holds, twice,
    /// <see cref="InFlight"/> apart: a claim whose commit was already at the database when the cut struck is released
    /// between the reads and is not counted. What is held at both reads the node can no longer change. When it holds
    /// none, <paramref name="undo"/> and try again after a moment of load. Returns the claims it held when the cut stuck.
    /// </summary>
    public static Task<IReadOnlyList<Guid>> CutWhileItHoldsClaimsAsync(string node, Action cut, Action undo, StoreSnapshotReader store,
        CancellationToken cancellationToken) =>
        CutWhileItHoldsAsync(node, cut, undo, ct => store.ClaimsHeldAsync(node, ct), cancellationToken);

    /// <summary>As <see cref="CutWhileItHoldsClaimsAsync"/>, for what <paramref name="heldBy"/> reads (signal claims, delivery leases).</summary>
    public static async Task<IReadOnlyList<Guid>> CutWhileItHoldsAsync(string node, Action cut, Action undo,
        Func<CancellationToken, Task<IReadOnlyList<Guid>>> heldBy, CancellationToken cancellationToken)
    {
        var waited = Stopwatch.StartNew();
        while (true)
        {
            cut();
            var first = await heldBy(cancellationToken);
            var claims = first.Count == 0 ? first : await StillHeldAsync(first, heldBy, cancellationToken);
            if (claims.Count > 0)
            {
                return claims;
            }

            undo();
            if (waited.Elapsed > Deadline)
            {
                throw new InvalidOperationException($"{node} never held a claim under load within {Deadline.TotalSeconds:0} s");
            }

            // The condition is the node holding a claim; ask again after a moment of load.
            await Task.Delay(TimeSpan.FromMilliseconds(10), cancellationToken);
        }
    }

    private static async Task<IReadOnlyList<Guid>> StillHeldAsync(IReadOnlyList<Guid> first, Func<CancellationToken, Task<IReadOnlyList<Guid>>> heldBy,
        CancellationToken cancellationToken)
    {
        await Task.Delay(InFlight, cancellationToken);
        var second = (await heldBy(cancellationToken)).ToHashSet();
        return [.. first.Where(second.Contains)];
    }
}
