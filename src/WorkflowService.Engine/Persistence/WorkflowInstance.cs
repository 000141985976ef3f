namespace WorkflowService.Engine.Persistence;

/// <summary>The durable state of one workflow instance, as persisted at each wait point.</summary>
public sealed class WorkflowInstance : IWaitState
{
    public Guid Id { get; set; }
    /// <summary>
    /// The tenant it belongs to ("" is the default tenant): its definition is looked up there, its children inherit it,
    /// and callers of another tenant do not see it. Never changes.
    /// </summary>
    public string Tenant { get; set; } = "";
    public required string DefinitionName { get; set; }
    public int DefinitionVersion { get; set; }
    public InstanceStatus Status { get; set; }
    public string? BusinessKey { get; set; }
    /// <summary>Who started it (a token's user id or a key's name); null when authentication is off or a parent started it.</summary>
    public string? StartedBy { get; set; }
    public string? IdempotencyKey { get; set; }
    public string? InputJson { get; set; }
    public string VariablesJson { get; set; } = "{}";
    public string? OutputJson { get; set; }
    public string? Error { get; set; }

    /// <summary>Where the instance waits; null while running or once ended.</summary>
    public WaitKind? WaitKind { get; set; }
    public string? WaitStepId { get; set; }
    public string? WaitSignal { get; set; }
    /// <inheritdoc cref="IWaitState.WaitSignalId"/>
    public Guid? WaitSignalId { get; set; }
    public Guid? WaitTaskId { get; set; }

    /// <summary>The instance that started this one from a subWorkflow step; it is signalled when this one ends.</summary>
    public Guid? ParentInstanceId { get; set; }
    /// <summary>The parent's wait this instance ends (the id of the parent's $subflow signal).</summary>
    public Guid? ParentWaitId { get; set; }

    /// <summary>
    /// The branches of the parallel step the instance is in (JSON, owned by the executor): each branch's position and
    /// wait. Null outside a parallel step.
    /// </summary>
    public string? BranchesJson { get; set; }

    /// <summary>Signals that arrived before a matching wait, kept for later (saves a query when zero).</summary>
    public int ParkedSignals { get; set; }

    /// <summary>
    /// The search attribute values this commit writes with the row (a run of a definition that declares some); null when
    /// the commit leaves the stored values as they are, as every commit of a definition without attributes does. A list
    /// read by the search path carries the tenant's values here too.
    /// </summary>
    public IReadOnlyList<Search.SearchAttributeValue>? SearchAttributes { get; set; }

    /// <summary>
    /// The values in a store's own form as it last read or wrote them (a document store that replaces whole documents
    /// writes them back on a commit that carries no <see cref="SearchAttributes"/>); the engine never reads it.
    /// </summary>
    public object? StoreSearchValues { get; set; }

    /// <summary>Optimistic-concurrency version; every commit increments it.</summary>
    public int Version { get; set; }
    /// <summary>How many history events the instance has (the next event's sequence number).</summary>
    public int HistoryLength { get; set; }

    public DateTime CreatedAt { get; set; }
    public DateTime UpdatedAt { get; set; }
    public DateTime? CompletedAt { get; set; }

    /// <summary>Where each branch of the parallel step the instance is in stands; empty outside a parallel step.</summary>
    public IReadOnlyList<BranchWait> ParallelBranches() =>
        BranchesJson is null ? [] : ParallelBranch.Parse(BranchesJson).ConvertAll(b => b.ToReadModel());

    public WorkflowInstance Clone() => (WorkflowInstance)MemberwiseClone();

    public void ClearWait()
    {
        IWaitState.Clear(this);
        BranchesJson = null;
    }
}
