using MongoDB.Driver;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>
/// Revoked credentials (<see cref="IRevocationList"/>) as named documents of the leases collection, held by
/// <see cref="Holder"/> until the credential would have expired: the collection every node reads, with no schema step of
/// their own. Each revocation also deletes the documents that have run out.
/// </summary>
public sealed partial class MongoWorkflowStore : IRevocationList
{
    private const string Holder = "revoked";

    public async Task RevokeAsync(string id, TimeSpan remaining, CancellationToken cancellationToken)
    {
        ArgumentException.ThrowIfNullOrEmpty(id);
        await TryTakeLeaseAsync(id, Holder, remaining, cancellationToken).ConfigureAwait(false);
        var now = NowMs();
        await _leases.DeleteManyAsync(l => l.Owner == Holder && l.UntilMs < now, cancellationToken).ConfigureAwait(false);
    }

    public async Task<bool> IsRevokedAsync(string id, CancellationToken cancellationToken)
    {
        var now = NowMs();
        return await _leases.Find(l => l.Name == id && l.Owner == Holder && l.UntilMs >= now).Limit(1)
            .AnyAsync(cancellationToken).ConfigureAwait(false);
    }
}
