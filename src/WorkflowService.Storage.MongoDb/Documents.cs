using MongoDB.Bson;
using MongoDB.Bson.Serialization.Attributes;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

// The documents as MongoDB stores them: one small class per collection, mapped by attributes, so that the engine's types
// stay free of MongoDB (an architecture test holds the engine to that). Field names are short camelCase; enums are
// stored as their names (as the relational stores do), times as BSON dates (millisecond precision), ids as standard
// UUIDs (subtype 4, said on each member: the driver's own default has no representation, and a process-wide registration
// would reach into the host's other MongoDB code). Optional fields are stored as null rather
// than left out, so that every filter on "is null" reads the same on documents old and new.

/// <summary>A workflow instance with its wait state and its parallel branches (collection "instances").</summary>
internal sealed class InstanceDocument
{
    [BsonId] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid Id { get; set; }
    [BsonElement("tenant")] public string Tenant { get; set; } = "";
    [BsonElement("definitionName")] public string DefinitionName { get; set; } = "";
    [BsonElement("definitionVersion")] public int DefinitionVersion { get; set; }
    [BsonElement("status")] public string Status { get; set; } = "";
    [BsonElement("businessKey")] public string? BusinessKey { get; set; }
    /// <summary>The business key while the instance is open, null once it ended: its unique index lets ended instances' keys repeat.</summary>
    [BsonElement("openBusinessKey")] public string? OpenBusinessKey { get; set; }
    [BsonElement("startedBy")] public string? StartedBy { get; set; }
    [BsonElement("idempotencyKey")] public string? IdempotencyKey { get; set; }
    [BsonElement("input")] public string? InputJson { get; set; }
    [BsonElement("variables")] public string VariablesJson { get; set; } = "{}";
    [BsonElement("output")] public string? OutputJson { get; set; }
    [BsonElement("error")] public string? Error { get; set; }
    [BsonElement("waitKind")] public string? WaitKind { get; set; }
    [BsonElement("waitStepId")] public string? WaitStepId { get; set; }
    [BsonElement("waitSignal")] public string? WaitSignal { get; set; }
    [BsonElement("waitSignalId")] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid? WaitSignalId { get; set; }
    [BsonElement("waitTaskId")] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid? WaitTaskId { get; set; }
    [BsonElement("parentInstanceId")] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid? ParentInstanceId { get; set; }
    [BsonElement("parentWaitId")] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid? ParentWaitId { get; set; }
    /// <summary>The executor's branch state, kept as the JSON it owns (the store never reads inside it).</summary>
    [BsonElement("branches")] public string? BranchesJson { get; set; }
    [BsonElement("parkedSignals")] public int ParkedSignals { get; set; }
    [BsonElement("version")] public int Version { get; set; }
    [BsonElement("historyLength")] public int HistoryLength { get; set; }
    [BsonElement("createdAt")] public DateTime CreatedAt { get; set; }
    [BsonElement("updatedAt")] public DateTime UpdatedAt { get; set; }
    [BsonElement("completedAt")] public DateTime? CompletedAt { get; set; }
    /// <summary>Search attribute values by slot (search.kw01, …), each slot indexed where present (step 8); absent without any.</summary>
    [BsonElement("search")] [BsonIgnoreIfNull] public BsonDocument? Search { get; set; }

    public static InstanceDocument From(WorkflowInstance i) => new()
    {
        Search = i.StoreSearchValues as BsonDocument,
        Id = i.Id, Tenant = i.Tenant, DefinitionName = i.DefinitionName, DefinitionVersion = i.DefinitionVersion, Status = i.Status.ToString(),
        BusinessKey = i.BusinessKey, OpenBusinessKey = i.CompletedAt is null ? i.BusinessKey : null, StartedBy = i.StartedBy, IdempotencyKey = i.IdempotencyKey, InputJson = i.InputJson,
        VariablesJson = i.VariablesJson, OutputJson = i.OutputJson, Error = i.Error, WaitKind = i.WaitKind?.ToString(),
        WaitStepId = i.WaitStepId, WaitSignal = i.WaitSignal, WaitSignalId = i.WaitSignalId, WaitTaskId = i.WaitTaskId,
        ParentInstanceId = i.ParentInstanceId, ParentWaitId = i.ParentWaitId, BranchesJson = i.BranchesJson, ParkedSignals = i.ParkedSignals,
        Version = i.Version, HistoryLength = i.HistoryLength, CreatedAt = i.CreatedAt, UpdatedAt = i.UpdatedAt, CompletedAt = i.CompletedAt,
    };

    public WorkflowInstance ToModel() => new()
    {
        Id = Id, Tenant = Tenant, DefinitionName = DefinitionName, DefinitionVersion = DefinitionVersion, Status = Enum.Parse<InstanceStatus>(Status),
        BusinessKey = BusinessKey, StartedBy = StartedBy, IdempotencyKey = IdempotencyKey, InputJson = InputJson, VariablesJson = VariablesJson,
        OutputJson = OutputJson, Error = Error, WaitKind = WaitKind is null ? null : Enum.Parse<WaitKind>(WaitKind), WaitStepId = WaitStepId,
        WaitSignal = WaitSignal, WaitSignalId = WaitSignalId, WaitTaskId = WaitTaskId, ParentInstanceId = ParentInstanceId,
        ParentWaitId = ParentWaitId, BranchesJson = BranchesJson, ParkedSignals = ParkedSignals, Version = Version,
        HistoryLength = HistoryLength, CreatedAt = Utc(CreatedAt), UpdatedAt = Utc(UpdatedAt), CompletedAt = CompletedAt is { } c ? Utc(c) : null,
        StoreSearchValues = Search,
    };

    internal static DateTime Utc(DateTime value) => value.Kind == DateTimeKind.Utc ? value : DateTime.SpecifyKind(value, DateTimeKind.Utc);
}

/// <summary>A queued signal with its lease (collection "signals"); the change stream watches this collection.</summary>
internal sealed class SignalDocument
{
    [BsonId] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid Id { get; set; }
    [BsonElement("instanceId")] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid InstanceId { get; set; }
    [BsonElement("name")] public string Name { get; set; } = "";
    [BsonElement("payload")] public string? PayloadJson { get; set; }
    [BsonElement("status")] public string Status { get; set; } = "";
    [BsonElement("dueAtMs")] public long DueAtMs { get; set; }
    [BsonElement("attempts")] public int Attempts { get; set; }
    [BsonElement("leaseOwner")] public string? LeaseOwner { get; set; }
    [BsonElement("leaseToken")] public long LeaseToken { get; set; }
    [BsonElement("leaseUntilMs")] public long? LeaseUntilMs { get; set; }
    [BsonElement("lastError")] public string? LastError { get; set; }
    [BsonElement("idempotencyKey")] public string? IdempotencyKey { get; set; }
    [BsonElement("actor")] public string? Actor { get; set; }
    [BsonElement("subjectId")] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid? SubjectId { get; set; }
    [BsonElement("createdAt")] public DateTime CreatedAt { get; set; }
    [BsonElement("handledAt")] public DateTime? HandledAt { get; set; }
    [BsonElement("traceParent")] public string? TraceParent { get; set; }

    public static SignalDocument From(SignalMessage m) => new()
    {
        Id = m.Id, InstanceId = m.InstanceId, Name = m.Name, PayloadJson = m.PayloadJson, Status = m.Status.ToString(), DueAtMs = m.DueAtMs,
        Attempts = m.Attempts, LeaseOwner = m.LeaseOwner, LeaseToken = m.LeaseToken, LeaseUntilMs = m.LeaseUntilMs, LastError = m.LastError,
        IdempotencyKey = m.IdempotencyKey, Actor = m.Actor, SubjectId = m.SubjectId, CreatedAt = m.CreatedAt, HandledAt = m.HandledAt,
        TraceParent = m.TraceParent,
    };

    public SignalMessage ToModel() => new()
    {
        Id = Id, InstanceId = InstanceId, Name = Name, PayloadJson = PayloadJson, Status = Enum.Parse<SignalStatus>(Status), DueAtMs = DueAtMs,
        Attempts = Attempts, LeaseOwner = LeaseOwner, LeaseToken = LeaseToken, LeaseUntilMs = LeaseUntilMs, LastError = LastError,
        IdempotencyKey = IdempotencyKey, Actor = Actor, SubjectId = SubjectId, CreatedAt = InstanceDocument.Utc(CreatedAt),
        HandledAt = HandledAt is { } h ? InstanceDocument.Utc(h) : null, TraceParent = TraceParent,
    };
}

/// <summary>
/// One history event (collection "history"). Its key is the server's ObjectId; (instanceId, sequence) is unique, which
/// is what turns two writers appending from the same version into a conflict.
/// </summary>
internal sealed class HistoryDocument
{
    [BsonId] public ObjectId Id { get; set; }
    [BsonElement("instanceId")] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid InstanceId { get; set; }
    [BsonElement("sequence")] public int Sequence { get; set; }
    [BsonElement("at")] public DateTime At { get; set; }
    [BsonElement("type")] public string Type { get; set; } = "";
    [BsonElement("stepId")] public string? StepId { get; set; }
    [BsonElement("data")] public string? DataJson { get; set; }
    [BsonElement("actor")] public string? Actor { get; set; }

    public static HistoryDocument From(HistoryEvent h) => new()
    {
        Id = ObjectId.GenerateNewId(), InstanceId = h.InstanceId, Sequence = h.Sequence, At = h.At, Type = h.Type, StepId = h.StepId,
        DataJson = h.DataJson, Actor = h.Actor,
    };

    /// <summary>
    /// The event; its <see cref="HistoryEvent.Id"/> is left 0: MongoDB has no table-wide counter, and nothing reads it
    /// (events are ordered and named by their instance's sequence).
    /// </summary>
    public HistoryEvent ToModel() => new()
    {
        InstanceId = InstanceId, Sequence = Sequence, At = InstanceDocument.Utc(At), Type = Type, StepId = StepId, DataJson = DataJson, Actor = Actor,
    };
}

/// <summary>A human task (collection "tasks").</summary>
internal sealed class TaskDocument
{
    [BsonId] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid Id { get; set; }
    [BsonElement("instanceId")] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid InstanceId { get; set; }
    [BsonElement("tenant")] public string Tenant { get; set; } = "";
    [BsonElement("definitionName")] public string DefinitionName { get; set; } = "";
    [BsonElement("stepId")] public string StepId { get; set; } = "";
    [BsonElement("title")] public string Title { get; set; } = "";
    [BsonElement("assignee")] public string? Assignee { get; set; }
    [BsonElement("role")] public string? Role { get; set; }
    [BsonElement("status")] public string Status { get; set; } = "";
    [BsonElement("claimedBy")] public string? ClaimedBy { get; set; }
    [BsonElement("data")] public string? DataJson { get; set; }
    [BsonElement("result")] public string? ResultJson { get; set; }
    [BsonElement("createdAt")] public DateTime CreatedAt { get; set; }
    [BsonElement("completedAt")] public DateTime? CompletedAt { get; set; }

    public static TaskDocument From(HumanTask t) => new()
    {
        Id = t.Id, InstanceId = t.InstanceId, Tenant = t.Tenant, DefinitionName = t.DefinitionName, StepId = t.StepId, Title = t.Title,
        Assignee = t.Assignee, Role = t.Role, Status = t.Status.ToString(), ClaimedBy = t.ClaimedBy, DataJson = t.DataJson,
        ResultJson = t.ResultJson, CreatedAt = t.CreatedAt, CompletedAt = t.CompletedAt,
    };

    public HumanTask ToModel() => new()
    {
        Id = Id, InstanceId = InstanceId, Tenant = Tenant, DefinitionName = DefinitionName, StepId = StepId, Title = Title, Assignee = Assignee,
        Role = Role, Status = Enum.Parse<HumanTaskStatus>(Status), ClaimedBy = ClaimedBy, DataJson = DataJson, ResultJson = ResultJson,
        CreatedAt = InstanceDocument.Utc(CreatedAt), CompletedAt = CompletedAt is { } c ? InstanceDocument.Utc(c) : null,
    };
}

/// <summary>One published version of a definition (collection "definitions"); (tenant, name, version) is unique.</summary>
internal sealed class DefinitionDocument
{
    [BsonId] public ObjectId Id { get; set; }
    [BsonElement("tenant")] public string Tenant { get; set; } = "";
    [BsonElement("name")] public string Name { get; set; } = "";
    [BsonElement("version")] public int Version { get; set; }
    [BsonElement("json")] public string Json { get; set; } = "";
    [BsonElement("description")] public string? Description { get; set; }
    [BsonElement("createdAt")] public DateTime CreatedAt { get; set; }

    public static DefinitionDocument From(DefinitionRecord d) => new()
    {
        Id = ObjectId.GenerateNewId(), Tenant = d.Tenant, Name = d.Name, Version = d.Version, Json = d.Json, Description = d.Description,
        CreatedAt = d.CreatedAt,
    };

    public DefinitionRecord ToModel() => new()
    {
        Tenant = Tenant, Name = Name, Version = Version, Json = Json, Description = Description, CreatedAt = InstanceDocument.Utc(CreatedAt),
    };
}

/// <summary>A named lease (collection "leases"): the retention job's, and the schema migration's while it runs.</summary>
internal sealed class LeaseDocument
{
    [BsonId] public string Name { get; set; } = "";
    [BsonElement("owner")] public string Owner { get; set; } = "";
    [BsonElement("untilMs")] public long UntilMs { get; set; }
}

/// <summary>
/// The schema version document (collection "schema", one document "workflow"), as the relational stores' version row:
/// the oldest release schema that may run on the database, the newest step applied, and the steps.
/// </summary>
internal sealed class SchemaDocument
{
    public const string Key = "workflow";

    [BsonId] public string Id { get; set; } = Key;
    [BsonElement("oldestSupported")] public int OldestSupported { get; set; }
    [BsonElement("newest")] public int Newest { get; set; }
    [BsonElement("steps")] public List<SchemaStepDocument> Steps { get; set; } = [];
}

/// <summary>One applied schema step.</summary>
internal sealed class SchemaStepDocument
{
    [BsonElement("version")] public int Version { get; set; }
    [BsonElement("description")] public string Description { get; set; } = "";
    [BsonElement("oldestCompatible")] public int OldestCompatible { get; set; }
    [BsonElement("appliedAt")] public DateTime AppliedAt { get; set; }
}

/// <summary>An event subscription (collection "subscriptions"); (tenant, name) is unique.</summary>
internal sealed class SubscriptionDocument
{
    [BsonId] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid Id { get; set; }
    [BsonElement("tenant")] public string Tenant { get; set; } = "";
    [BsonElement("name")] public string Name { get; set; } = "";
    [BsonElement("endpoint")] public string Endpoint { get; set; } = "";
    [BsonElement("events")] public List<string> Events { get; set; } = [];
    [BsonElement("definitions")] public List<string> Definitions { get; set; } = [];
    /// <summary>
    /// Absent in a subscription written before batches, and written only when it is not 1 (each event alone), so that a
    /// node of an older build still reads every subscription that does not take batches.
    /// </summary>
    [BsonElement("maxEventsPerBatch")] [BsonDefaultValue(1)] [BsonIgnoreIfDefault] public int MaxEventsPerBatch { get; set; } = 1;
    [BsonElement("enabled")] public bool Enabled { get; set; }
    [BsonElement("pausedReason")] public string? PausedReason { get; set; }
    [BsonElement("secret")] public string Secret { get; set; } = "";
    [BsonElement("previousSecret")] public string? PreviousSecret { get; set; }
    [BsonElement("previousSecretExpiresAt")] public DateTime? PreviousSecretExpiresAt { get; set; }
    [BsonElement("createdAt")] public DateTime CreatedAt { get; set; }
    [BsonElement("updatedAt")] public DateTime UpdatedAt { get; set; }
    [BsonElement("version")] public int Version { get; set; }

    public static SubscriptionDocument From(Subscription s) => new()
    {
        Id = s.Id, Tenant = s.Tenant, Name = s.Name, Endpoint = s.Endpoint, Events = [.. s.Events], Definitions = [.. s.Definitions],
        MaxEventsPerBatch = s.MaxEventsPerBatch, Enabled = s.Enabled, PausedReason = s.PausedReason, Secret = s.Secret, PreviousSecret = s.PreviousSecret,
        PreviousSecretExpiresAt = s.PreviousSecretExpiresAt, CreatedAt = s.CreatedAt, UpdatedAt = s.UpdatedAt, Version = s.Version,
    };

    public Subscription ToModel() => new()
    {
        Id = Id, Tenant = Tenant, Name = Name, Endpoint = Endpoint, Events = Events, Definitions = Definitions, MaxEventsPerBatch = MaxEventsPerBatch, Enabled = Enabled,
        PausedReason = PausedReason, Secret = Secret, PreviousSecret = PreviousSecret,
        PreviousSecretExpiresAt = PreviousSecretExpiresAt is { } expires ? InstanceDocument.Utc(expires) : null,
        CreatedAt = InstanceDocument.Utc(CreatedAt), UpdatedAt = InstanceDocument.Utc(UpdatedAt), Version = Version,
    };
}

/// <summary>One event on its way to one subscription (collection "deliveries"), written in its commit's transaction.</summary>
internal sealed class DeliveryDocument
{
    [BsonId] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid Id { get; set; }
    [BsonElement("sequence")] public long Sequence { get; set; }
    [BsonElement("subscriptionId")] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid SubscriptionId { get; set; }
    [BsonElement("tenant")] public string Tenant { get; set; } = "";
    [BsonElement("instanceId")] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid InstanceId { get; set; }
    [BsonElement("type")] public string Type { get; set; } = "";
    [BsonElement("body")] public string Body { get; set; } = "";
    [BsonElement("createdAt")] public DateTime CreatedAt { get; set; }
    [BsonElement("dueAtMs")] public long DueAtMs { get; set; }
    [BsonElement("status")] [BsonRepresentation(BsonType.String)] public DeliveryStatus Status { get; set; }
    [BsonElement("attempts")] public int Attempts { get; set; }
    [BsonElement("leaseOwner")] public string? LeaseOwner { get; set; }
    [BsonElement("leaseToken")] public long? LeaseToken { get; set; }
    [BsonElement("leaseUntilMs")] public long? LeaseUntilMs { get; set; }
    [BsonElement("lastStatus")] public int? LastStatus { get; set; }
    [BsonElement("lastError")] public string? LastError { get; set; }
    [BsonElement("deliveredAt")] public DateTime? DeliveredAt { get; set; }
    [BsonElement("latencyMs")] public long? LatencyMs { get; set; }

    public static DeliveryDocument From(EventDelivery d) => new()
    {
        Id = d.Id, Sequence = d.Sequence, SubscriptionId = d.SubscriptionId, Tenant = d.Tenant, InstanceId = d.InstanceId, Type = d.Type, Body = d.Body,
        CreatedAt = d.CreatedAt, DueAtMs = d.DueAtMs, Status = d.Status, Attempts = d.Attempts, LeaseOwner = d.LeaseOwner, LeaseToken = d.LeaseToken,
        LeaseUntilMs = d.LeaseUntilMs, LastStatus = d.LastStatus, LastError = d.LastError, DeliveredAt = d.DeliveredAt, LatencyMs = d.LatencyMs,
    };

    public EventDelivery ToModel() => new()
    {
        Id = Id, Sequence = Sequence, SubscriptionId = SubscriptionId, Tenant = Tenant, InstanceId = InstanceId, Type = Type, Body = Body,
        CreatedAt = InstanceDocument.Utc(CreatedAt), DueAtMs = DueAtMs, Status = Status, Attempts = Attempts, LeaseOwner = LeaseOwner,
        LeaseToken = LeaseToken, LeaseUntilMs = LeaseUntilMs, LastStatus = LastStatus, LastError = LastError,
        DeliveredAt = DeliveredAt is { } at ? InstanceDocument.Utc(at) : null, LatencyMs = LatencyMs,
    };
}
