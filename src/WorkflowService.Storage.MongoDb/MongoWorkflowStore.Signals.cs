using System.Diagnostics.CodeAnalysis;
using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>The signal queue (<see cref="ISignalQueue"/>).</summary>
public sealed partial class MongoWorkflowStore : ISignalQueue
{
    private static FilterDefinitionBuilder<SignalDocument> SignalFilter => Builders<SignalDocument>.Filter;
    private static UpdateDefinitionBuilder<SignalDocument> SignalUpdate => Builders<SignalDocument>.Update;

    /// <summary>A pending signal's attempts less the one its claim counted, never below zero (a claim given back untried).</summary>
    private static readonly BsonDocument RefundedAttempt =
        new("$max", new BsonArray { new BsonDocument("$subtract", new BsonArray { "$attempts", 1 }), 0 });

    // A single insert: atomic on its own, no transaction.
    public async Task<(SignalMessage Signal, bool Created)> EnqueueSignalAsync(SignalMessage signal, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(signal);
        var (stored, created) = await InsertSignalAsync(signal, cancellationToken).ConfigureAwait(false);
        return (stored, created);
    }

    // No transaction: MongoDB cannot make "insert while the instance is open" one statement, and a transaction would not
    // close the window either (its snapshot read takes no lock on the instance, and locking it would make every signal
    // conflict with its instance's commits). The relational statement has the same window under READ COMMITTED: a signal
    // that lands as its instance ends is settled Unmatched by the worker that claims it.
    public async Task<(SignalMessage? Signal, bool Created)> EnqueueSignalIfOpenAsync(SignalMessage signal, string tenant, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(signal);
        var instance = await _instances.Find(i => i.Id == signal.InstanceId)
            .Project(i => new { i.Tenant, i.Status })
            .FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        if (instance is null || instance.Tenant != tenant || Enum.Parse<InstanceStatus>(instance.Status).IsTerminal())
        {
            return (null, false);
        }

        return await InsertSignalAsync(signal, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Inserts a signal; a repeated idempotency key answers the signal stored first.</summary>
    private async Task<(SignalMessage Signal, bool Created)> InsertSignalAsync(SignalMessage signal, CancellationToken cancellationToken)
    {
        try
        {
            await _signals.InsertOneAsync(SignalDocument.From(signal), cancellationToken: cancellationToken).ConfigureAwait(false);
            return (signal, true);
        }
        catch (MongoException e) when (IsDuplicateKey(e) && signal.IdempotencyKey is not null)
        {
            // The key's type named as well: the (instanceId, idempotencyKey) index is partial.
            var existing = await _signals.Find(SignalFilter.Eq(s => s.InstanceId, signal.InstanceId) & SignalFilter.Eq(s => s.IdempotencyKey, signal.IdempotencyKey)
                    & SignalFilter.Type(s => s.IdempotencyKey, BsonType.String))
                .FirstAsync(cancellationToken).ConfigureAwait(false);
            return (existing.ToModel(), false);
        }
    }

    public async Task<IReadOnlyList<SignalMessage>> ClaimDueSignalsAsync(string owner, int max, TimeSpan lease, CancellationToken cancellationToken) =>
        (await ClaimAsync(owner, max, lease, cancellationToken).ConfigureAwait(false)).ConvertAll(s => s.ToModel());

    public async Task<IReadOnlyList<ClaimedSignal>> ClaimDueWorkAsync(string owner, int max, TimeSpan lease, CancellationToken cancellationToken)
    {
        var claimed = await ClaimAsync(owner, max, lease, cancellationToken).ConfigureAwait(false);
        if (claimed.Count == 0)
        {
            return [];
        }

        // MongoDB cannot return the instances with the claim: one read after it, for the whole batch.
        var instances = (await GetInstancesAsync(claimed.Select(s => s.InstanceId).ToHashSet(), cancellationToken).ConfigureAwait(false))
            .ToDictionary(i => i.Id);
        // Each claimed signal gets an instance of its own: a worker changes it as it runs.
        return claimed.ConvertAll(s => new ClaimedSignal(s.ToModel(), instances.GetValueOrDefault(s.InstanceId)?.Clone()));
    }

    /// <summary>
    /// The claim: up to <paramref name="max"/> findOneAndUpdate calls, each leasing the earliest due signal that no live
    /// lease holds, atomically on that one document (two nodes never lease the same signal; each takes the next). It stops
    /// at the first call that finds nothing, so an empty queue costs one round trip and never waits on the server. No
    /// transaction: each lease stands alone, and one lost in a crash runs out and is claimed again.
    /// </summary>
    [SuppressMessage("Security", "CA5394:Do not use insecure randomness", Justification = "The lease token only tells this claim from an earlier one of the same signal (a fencing value), not a secret.")]
    private async Task<List<SignalDocument>> ClaimAsync(string owner, int max, TimeSpan lease, CancellationToken cancellationToken)
    {
        var now = NowMs();
        var token = Random.Shared.NextInt64(1, long.MaxValue);
        var until = now + (long)lease.TotalMilliseconds;
        var due = SignalFilter.Eq(s => s.Status, nameof(SignalStatus.Pending))
                  & SignalFilter.Lte(s => s.DueAtMs, now)
                  & (SignalFilter.Eq(s => s.LeaseUntilMs, null) | SignalFilter.Lt(s => s.LeaseUntilMs, now));
        var update = SignalUpdate
            .Set(s => s.LeaseOwner, owner)
            .Set(s => s.LeaseToken, token)
            .Set(s => s.LeaseUntilMs, until)
            .Inc(s => s.Attempts, 1);
        var options = new FindOneAndUpdateOptions<SignalDocument>
        {
            Sort = Builders<SignalDocument>.Sort.Ascending(s => s.DueAtMs),
            ReturnDocument = ReturnDocument.After,
        };
        var claimed = new List<SignalDocument>(Math.Min(max, 64));
        while (claimed.Count < max)
        {
            var signal = await _claims.FindOneAndUpdateAsync(due, update, options, cancellationToken).ConfigureAwait(false);
            if (signal is null)
            {
                break;
            }

            claimed.Add(signal);
        }

        return claimed;
    }

    public async Task<long?> GetNextDueAsync(CancellationToken cancellationToken)
    {
        // The earliest moment a pending signal becomes claimable: its due time, or its lease's end when that is later.
        BsonDocument[] stages =
        [
            new("$match", new BsonDocument("status", nameof(SignalStatus.Pending))),
            new("$group", new BsonDocument
            {
                { "_id", BsonNull.Value },
                { "next", new BsonDocument("$min", new BsonDocument("$max", new BsonArray { "$dueAtMs", new BsonDocument("$ifNull", new BsonArray { "$leaseUntilMs", 0L }) })) },
            }),
        ];
        using var cursor = await _signals.AggregateAsync(new BsonDocumentStagePipelineDefinition<SignalDocument, BsonDocument>(stages),
            cancellationToken: cancellationToken).ConfigureAwait(false);
        var result = await cursor.FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        return result is not null && result.TryGetValue("next", out var next) && next.IsNumeric ? next.ToInt64() : null;
    }

    public async Task<bool> ExtendLeaseAsync(Guid signalId, long leaseToken, TimeSpan lease, CancellationToken cancellationToken)
    {
        var until = NowMs() + (long)lease.TotalMilliseconds;
        // Only a claim still held: a signal given back for a retry keeps its token but has no owner, and must stay due when
        // its retry says, not a lease from now.
        var result = await _claims.UpdateOneAsync(
            Leased(signalId, leaseToken) & SignalFilter.Ne(s => s.LeaseOwner, null),
            SignalUpdate.Set(s => s.LeaseUntilMs, until), cancellationToken: cancellationToken).ConfigureAwait(false);
        return result.MatchedCount == 1;
    }

    public async Task<bool> ReleaseSignalAsync(Guid signalId, long leaseToken, long dueAtMs, string? error, CancellationToken cancellationToken)
    {
        var update = SignalUpdate.Set(s => s.LeaseOwner, null).Set(s => s.LeaseUntilMs, null).Set(s => s.DueAtMs, dueAtMs);
        if (error is not null)
        {
            update = update.Set(s => s.LastError, error);
        }

        var result = await _signals.UpdateOneAsync(Leased(signalId, leaseToken), update, cancellationToken: cancellationToken).ConfigureAwait(false);
        return result.MatchedCount == 1;
    }

    public async Task<bool> DeferSignalAsync(Guid signalId, long leaseToken, long dueAtMs, CancellationToken cancellationToken)
    {
        // Not tried, only found early: the attempt the claim counted is given back.
        var result = await _signals.UpdateOneAsync(Leased(signalId, leaseToken),
            Pipeline<SignalDocument>(new BsonDocument
            {
                { "leaseOwner", BsonNull.Value },
                { "leaseUntilMs", BsonNull.Value },
                { "dueAtMs", dueAtMs },
                { "attempts", RefundedAttempt },
            }), cancellationToken: cancellationToken).ConfigureAwait(false);
        return result.MatchedCount == 1;
    }

    public async Task<bool> DeadLetterSignalAsync(Guid signalId, long leaseToken, string error, CancellationToken cancellationToken)
    {
        var result = await _signals.UpdateOneAsync(Leased(signalId, leaseToken),
            SignalUpdate
                .Set(s => s.Status, nameof(SignalStatus.DeadLettered))
                .Set(s => s.LeaseOwner, null)
                .Set(s => s.LeaseUntilMs, null)
                .Set(s => s.LastError, error), cancellationToken: cancellationToken).ConfigureAwait(false);
        return result.MatchedCount == 1;
    }

    public async Task<int> ReleaseLeasesAsync(string owner, CancellationToken cancellationToken)
    {
        // A claim released at shutdown was never attempted: give the attempt back. The owner's type is named so that the
        // partial leaseOwner index (leased signals only) can serve the filter.
        var result = await _signals.UpdateManyAsync(
            SignalFilter.Eq(s => s.LeaseOwner, owner) & SignalFilter.Type(s => s.LeaseOwner, BsonType.String)
            & SignalFilter.Eq(s => s.Status, nameof(SignalStatus.Pending)),
            Pipeline<SignalDocument>(new BsonDocument
            {
                { "leaseOwner", BsonNull.Value },
                { "leaseUntilMs", BsonNull.Value },
                { "attempts", RefundedAttempt },
            }), cancellationToken: cancellationToken).ConfigureAwait(false);
        return (int)result.ModifiedCount;
    }

    public async Task<SignalMessage?> GetSignalAsync(string tenant, Guid signalId, CancellationToken cancellationToken)
    {
        if (await GetSignalForEngineAsync(signalId, cancellationToken).ConfigureAwait(false) is not { } signal)
        {
            return null;
        }

        // A signal is its instance's tenant's (one without an instance the default tenant's), as QuerySignalsAsync reads it.
        var owner = await _instances.Find(i => i.Id == signal.InstanceId).Project(i => i.Tenant).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        return (owner ?? "") == tenant ? signal : null;
    }

    public async Task<SignalMessage?> GetSignalForEngineAsync(Guid signalId, CancellationToken cancellationToken) =>
        (await _signals.Find(s => s.Id == signalId).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false))?.ToModel();

    public async Task<IReadOnlyList<SignalMessage>> GetParkedSignalsAsync(Guid instanceId, CancellationToken cancellationToken)
    {
        var parked = await _signals.Find(s => s.InstanceId == instanceId && s.Status == nameof(SignalStatus.Parked))
            .SortBy(s => s.CreatedAt).ThenBy(s => s.Id).ToListAsync(cancellationToken).ConfigureAwait(false);
        return parked.ConvertAll(s => s.ToModel());
    }

    // Transaction boundary: a replay. The dead letter made pending again, its faulted instance waiting again (version
    // checked) and the replay's history event are one change: a replay half done would leave a pending signal for a
    // faulted instance, or a waiting instance whose signal is still dead.
    public Task<ReplayOutcome> ReplayDeadLetterAsync(Guid signalId, string tenant, HistoryEvent? replayEvent, CancellationToken cancellationToken) =>
        InTransactionAsync((session, ct) => ReplayOnceAsync(session, signalId, tenant, replayEvent, ct), cancellationToken);

    [SuppressMessage("Security", "CA5394:Do not use insecure randomness", Justification = "A fresh lease token (a fencing value) so an earlier claim's release cannot touch the replayed signal; not a secret.")]
    private async Task<ReplayOutcome> ReplayOnceAsync(IClientSessionHandle session, Guid signalId, string tenant, HistoryEvent? replayEvent,
        CancellationToken cancellationToken)
    {
        var signal = await _signals.Find(session, s => s.Id == signalId).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        // A signal is its instance's tenant's (one without an instance the default tenant's): to another tenant it does not exist.
        var instance = signal is null
            ? null
            : await _instances.Find(session, i => i.Id == signal.InstanceId).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        if (signal is null || (instance?.Tenant ?? "") != tenant)
        {
            return ReplayOutcome.NotFound;
        }

        if (signal.Status != nameof(SignalStatus.DeadLettered))
        {
            return ReplayOutcome.NotDeadLettered;
        }

        // Under the transaction's snapshot, another replay or commit of these documents meanwhile is a write conflict: the
        // loop runs this again, and the signal then reads as no longer dead-lettered (409).
        await _signals.UpdateOneAsync(session,
            SignalFilter.Eq(s => s.Id, signalId) & SignalFilter.Eq(s => s.Status, nameof(SignalStatus.DeadLettered)),
            SignalUpdate
                .Set(s => s.Status, nameof(SignalStatus.Pending))
                .Set(s => s.Attempts, 0)
                .Set(s => s.DueAtMs, NowMs())
                .Set(s => s.LeaseOwner, null)
                .Set(s => s.LeaseUntilMs, null)
                .Set(s => s.LeaseToken, Random.Shared.NextInt64(1, long.MaxValue)),
            cancellationToken: cancellationToken).ConfigureAwait(false);

        if (instance is { Status: nameof(InstanceStatus.Faulted) })
        {
            var expected = instance.Version;
            instance.Status = (instance.WaitKind is null ? InstanceStatus.Running : InstanceStatus.Waiting).ToString();
            instance.Error = null;
            instance.Version++;
            // Dated when the replay commits, and never before the instance's last commit (StoreInstant.NotBefore).
            instance.UpdatedAt = Now().NotBefore(InstanceDocument.Utc(instance.UpdatedAt));
            if (replayEvent is not null)
            {
                replayEvent.At = instance.UpdatedAt;
                replayEvent.Id = 0;
                replayEvent.InstanceId = instance.Id;
                replayEvent.Sequence = instance.HistoryLength++;
                await _history.InsertOneAsync(session, HistoryDocument.From(replayEvent), cancellationToken: cancellationToken).ConfigureAwait(false);
            }

            var replaced = await _instances.ReplaceOneAsync(session,
                Builders<InstanceDocument>.Filter.Eq(i => i.Id, instance.Id) & Builders<InstanceDocument>.Filter.Eq(i => i.Version, expected),
                instance, cancellationToken: cancellationToken).ConfigureAwait(false);
            if (replaced.MatchedCount != 1)
            {
                throw new ConcurrencyConflictException(instance.Id);
            }
        }

        return ReplayOutcome.Replayed;
    }

    /// <summary>The signal while <paramref name="leaseToken"/> is its claim's and it is still pending.</summary>
    private static FilterDefinition<SignalDocument> Leased(Guid signalId, long leaseToken) =>
        SignalFilter.Eq(s => s.Id, signalId) & SignalFilter.Eq(s => s.LeaseToken, leaseToken) & SignalFilter.Eq(s => s.Status, nameof(SignalStatus.Pending));
}
