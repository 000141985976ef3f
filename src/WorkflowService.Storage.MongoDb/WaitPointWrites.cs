using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>
/// The writes of one wait point, or of several committed together, as the driver's documents and write models grouped by
/// collection, so that a group of wait points costs the round trips of one. They run in the order one wait point needs
/// (<see cref="MongoWorkflowStore"/>'s WriteAsync): the instances (version-checked), their history, the signals and tasks
/// the runs created, the consumed signals settled under their leases, then the other signal and task updates in commit
/// order. Wait points of different instances touch different documents, so concatenating them changes no outcome.
/// </summary>
internal sealed class WaitPointWrites
{
    private static readonly string[] OpenSignalStatuses = [nameof(SignalStatus.Pending), nameof(SignalStatus.Parked)];
    private static readonly string[] OpenTaskStatuses = [nameof(HumanTaskStatus.Open), nameof(HumanTaskStatus.Claimed)];
    private static readonly BsonRegularExpression SystemSignal = new("^\\" + SignalMessage.SystemPrefix);

    private static FilterDefinitionBuilder<SignalDocument> Signals => Builders<SignalDocument>.Filter;
    private static UpdateDefinitionBuilder<SignalDocument> SignalUpdate => Builders<SignalDocument>.Update;

    public List<InstanceDocument> NewInstances { get; } = [];

    /// <summary>Replacements of instances still at the version read before their run: each must match its document.</summary>
    public List<WriteModel<InstanceDocument>> Replacements { get; } = [];

    public List<HistoryDocument> History { get; } = [];

    public List<SignalDocument> NewSignals { get; } = [];

    public List<TaskDocument> NewTasks { get; } = [];

    /// <summary>The outbox's deliveries, ordered within their instance by its new version (commits of one instance are serial).</summary>
    public List<DeliveryDocument> NewDeliveries { get; } = [];

    /// <summary>Consumed signals settled while their lease token is still theirs: each must match, or that lease was lost.</summary>
    public List<WriteModel<SignalDocument>> LeasedSettlements { get; } = [];

    /// <summary>The leases <see cref="LeasedSettlements"/> rely on, to tell which one was lost.</summary>
    public List<(Guid SignalId, long LeaseToken)> Leases { get; } = [];

    /// <summary>Every other signal update, in commit order: unleased transitions, parked signals requeued, open work closed.</summary>
    public List<WriteModel<SignalDocument>> SignalUpdates { get; } = [];

    public List<WriteModel<TaskDocument>> TaskUpdates { get; } = [];

    /// <summary>Adds <paramref name="commit"/>'s writes, its instance at its new version.</summary>
    public void Add(WaitPointCommit commit, long nowMs, DateTime handledAt)
    {
        ArgumentNullException.ThrowIfNull(commit);
        var instance = commit.Instance;
        instance.Version = commit.IsNew ? 1 : commit.ExpectedVersion + 1;
        var document = InstanceDocument.From(instance);
        if (commit.IsNew)
        {
            // A repeated idempotency or business key fails on its unique index.
            NewInstances.Add(document);
        }
        else
        {
            // The optimistic check: replaced only while still at the version read before the run.
            Replacements.Add(new ReplaceOneModel<InstanceDocument>(
                Builders<InstanceDocument>.Filter.Eq(i => i.Id, instance.Id) & Builders<InstanceDocument>.Filter.Eq(i => i.Version, commit.ExpectedVersion),
                document));
        }

        History.AddRange(commit.History.Select(HistoryDocument.From));
        NewSignals.AddRange(commit.NewSignals.Select(SignalDocument.From));
        NewTasks.AddRange(commit.NewTasks.Select(TaskDocument.From));
        for (var i = 0; commit.HasDeliveries && i < commit.Deliveries.Count; i++)
        {
            commit.Deliveries[i].Sequence = ((long)instance.Version << 20) + i;
            NewDeliveries.Add(DeliveryDocument.From(commit.Deliveries[i]));
        }
        foreach (var transition in commit.SignalTransitions)
        {
            AddTransition(transition, handledAt);
        }

        if (commit.RequeueParked)
        {
            // Every parked signal is due again now (or at its own time when that is earlier), unleased.
            SignalUpdates.Add(new UpdateManyModel<SignalDocument>(
                Signals.Eq(s => s.InstanceId, instance.Id) & Signals.Eq(s => s.Status, nameof(SignalStatus.Parked)),
                SignalUpdate
                    .Set(s => s.Status, nameof(SignalStatus.Pending))
                    .Min(s => s.DueAtMs, nowMs)
                    .Set(s => s.LeaseOwner, null)
                    .Set(s => s.LeaseUntilMs, null)));
        }

        if (commit.CloseOpenWork)
        {
            AddClose(commit, nowMs, handledAt);
        }
    }

    private void AddTransition(SignalTransition transition, DateTime handledAt)
    {
        var update = SignalUpdate.Set(s => s.Status, transition.Status.ToString()).Set(s => s.HandledAt, handledAt);
        if (transition.Error is { } error)
        {
            update = update.Set(s => s.LastError, error);
        }

        if (transition.LeaseToken is { } token)
        {
            // A claimed signal: settled only while our lease token is still the document's. The lease owner stays: it tells
            // which node handled it.
            LeasedSettlements.Add(new UpdateOneModel<SignalDocument>(
                Signals.Eq(s => s.Id, transition.SignalId) & Signals.Eq(s => s.LeaseToken, token),
                update.Set(s => s.LeaseUntilMs, null)));
            Leases.Add((transition.SignalId, token));
        }
        else
        {
            // Parked signals consumed by this run, and timers that lost their purpose; never touch a handled one.
            var from = transition.Status == SignalStatus.Cancelled ? SignalStatus.Pending : SignalStatus.Parked;
            SignalUpdates.Add(new UpdateOneModel<SignalDocument>(
                Signals.Eq(s => s.Id, transition.SignalId) & Signals.In(s => s.Status, new[] { from.ToString(), nameof(SignalStatus.Parked) }),
                update));
        }
    }

    /// <summary>
    /// The instance ended: its open signals that no live claim holds are closed, the engine's own ("$…") as Cancelled, the
    /// others as Unmatched (two updates, since the status depends on the name), and the tasks it names are cancelled.
    /// </summary>
    private void AddClose(WaitPointCommit commit, long nowMs, DateTime handledAt)
    {
        var open = Signals.Eq(s => s.InstanceId, commit.Instance.Id)
                   & Signals.In(s => s.Status, OpenSignalStatuses)
                   & (Signals.Eq(s => s.LeaseUntilMs, null) | Signals.Lt(s => s.LeaseUntilMs, nowMs));
        var system = Signals.Regex(s => s.Name, SystemSignal);
        SignalUpdates.Add(new UpdateManyModel<SignalDocument>(open & system,
            SignalUpdate.Set(s => s.Status, nameof(SignalStatus.Cancelled)).Set(s => s.HandledAt, handledAt)));
        SignalUpdates.Add(new UpdateManyModel<SignalDocument>(open & Signals.Not(system),
            SignalUpdate.Set(s => s.Status, nameof(SignalStatus.Unmatched)).Set(s => s.HandledAt, handledAt)));
        if (commit.ClosedTasks.Count > 0)
        {
            TaskUpdates.Add(new UpdateManyModel<TaskDocument>(
                Builders<TaskDocument>.Filter.In(t => t.Id, commit.ClosedTasks) & Builders<TaskDocument>.Filter.In(t => t.Status, OpenTaskStatuses),
                Builders<TaskDocument>.Update.Set(t => t.Status, nameof(HumanTaskStatus.Cancelled))));
        }
    }
}
