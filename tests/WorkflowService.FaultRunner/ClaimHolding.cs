using System.Diagnostics;
using WorkflowService.RunnerBackends;

namespace WorkflowService.FaultRunner;

/// <summary>Times a fault to strike a node while it holds claims, so that the fault has claims to orphan.</summary>
internal static class ClaimHolding
{
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Applies <paramref name="cut"/> to <paramref name="node"/>, then reads from the store the claims it holds (it can
    /// change none of them while cut off, so the answer cannot go stale); when it holds none, <paramref name="undo"/> and
    /// try again after a moment of load. Returns the claims it held when the cut stuck.
    /// </summary>
    public static async Task<IReadOnlyList<Guid>> CutWhileItHoldsClaimsAsync(string node, Action cut, Action undo, StoreSnapshotReader store,
        CancellationToken cancellationToken)
    {
        var waited = Stopwatch.StartNew();
        while (true)
        {
            cut();
            var claims = await store.ClaimsHeldAsync(node, cancellationToken);
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
}
