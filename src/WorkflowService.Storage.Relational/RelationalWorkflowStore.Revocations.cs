using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// Revoked credentials (<see cref="IRevocationList"/>) as named entries of wf_leases, held by <see cref="Holder"/> until
/// the credential would have expired: the table every node reads, with no schema step of their own. Each revocation also
/// deletes the entries that have run out, so the table holds about one entry per sign-out within a session's lifetime.
/// </summary>
public sealed partial class RelationalWorkflowStore : IRevocationList
{
    private const string Holder = "revoked";

    public async Task RevokeAsync(string id, TimeSpan remaining, CancellationToken cancellationToken)
    {
        ArgumentException.ThrowIfNullOrEmpty(id);
        await TryTakeLeaseAsync(id, Holder, remaining, cancellationToken).ConfigureAwait(false);
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var now = NowMs();
        await db.Leases.Where(l => l.Owner == Holder && l.UntilMs < now).ExecuteDeleteAsync(cancellationToken).ConfigureAwait(false);
    }

    public async Task<bool> IsRevokedAsync(string id, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var now = NowMs();
        return await db.Leases.AnyAsync(l => l.Name == id && l.Owner == Holder && l.UntilMs >= now, cancellationToken).ConfigureAwait(false);
    }
}
