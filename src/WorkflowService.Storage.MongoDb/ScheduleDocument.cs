using MongoDB.Bson;
using MongoDB.Bson.Serialization.Attributes;
using WorkflowService.Engine.Schedules;

namespace WorkflowService.Storage.MongoDb;

/// <summary>A schedule (collection "schedules"), mapped as the other documents are (see Documents.cs).</summary>
internal sealed class ScheduleDocument
{
    [BsonId] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid Id { get; set; }
    [BsonElement("tenant")] public string Tenant { get; set; } = "";
    [BsonElement("name")] public string Name { get; set; } = "";
    [BsonElement("definition")] public string DefinitionName { get; set; } = "";
    [BsonElement("definitionVersion")] public int? DefinitionVersion { get; set; }
    [BsonElement("input")] public string? InputJson { get; set; }
    [BsonElement("cron")] public string? Cron { get; set; }
    [BsonElement("timeZone")] public string TimeZone { get; set; } = "UTC";
    [BsonElement("intervalSeconds")] public long? IntervalSeconds { get; set; }
    [BsonElement("startAt")] public DateTime? StartAt { get; set; }
    [BsonElement("endAt")] public DateTime? EndAt { get; set; }
    [BsonElement("jitterSeconds")] public long JitterSeconds { get; set; }
    [BsonElement("businessKeyTemplate")] public string BusinessKeyTemplate { get; set; } = "";
    [BsonElement("overlap")] [BsonRepresentation(BsonType.String)] public ScheduleOverlap Overlap { get; set; }
    [BsonElement("catchUp")] [BsonRepresentation(BsonType.String)] public ScheduleCatchUp CatchUp { get; set; }
    [BsonElement("catchUpWindowSeconds")] public long? CatchUpWindowSeconds { get; set; }
    [BsonElement("enabled")] public bool Enabled { get; set; }
    [BsonElement("pausedReason")] public string? PausedReason { get; set; }
    [BsonElement("nextFireMs")] public long? NextFireMs { get; set; }
    [BsonElement("dueAtMs")] public long? DueAtMs { get; set; }
    [BsonElement("bufferedFireMs")] public long? BufferedFireMs { get; set; }
    [BsonElement("lastInstanceId")] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid? LastInstanceId { get; set; }
    [BsonElement("recent")] public List<ScheduleActionDocument> Recent { get; set; } = [];
    [BsonElement("leaseOwner")] public string? LeaseOwner { get; set; }
    [BsonElement("leaseUntilMs")] public long? LeaseUntilMs { get; set; }
    [BsonElement("leaseToken")] public long LeaseToken { get; set; }
    [BsonElement("createdAt")] public DateTime CreatedAt { get; set; }
    [BsonElement("updatedAt")] public DateTime UpdatedAt { get; set; }
    [BsonElement("version")] public int Version { get; set; }

    public static ScheduleDocument From(Schedule s) => new()
    {
        Id = s.Id, Tenant = s.Tenant, Name = s.Name, DefinitionName = s.DefinitionName, DefinitionVersion = s.DefinitionVersion, InputJson = s.InputJson,
        Cron = s.Cron, TimeZone = s.TimeZone, IntervalSeconds = s.IntervalSeconds, StartAt = s.StartAt, EndAt = s.EndAt, JitterSeconds = s.JitterSeconds,
        BusinessKeyTemplate = s.BusinessKeyTemplate, Overlap = s.Overlap, CatchUp = s.CatchUp, CatchUpWindowSeconds = s.CatchUpWindowSeconds,
        Enabled = s.Enabled, PausedReason = s.PausedReason, NextFireMs = s.NextFireMs, DueAtMs = s.DueAtMs, BufferedFireMs = s.BufferedFireMs,
        LastInstanceId = s.LastInstanceId, Recent = [.. s.Recent.Select(ScheduleActionDocument.From)], LeaseOwner = s.LeaseOwner,
        LeaseUntilMs = s.LeaseUntilMs, LeaseToken = s.LeaseToken, CreatedAt = s.CreatedAt, UpdatedAt = s.UpdatedAt, Version = s.Version,
    };

    public Schedule ToModel() => new()
    {
        Id = Id, Tenant = Tenant, Name = Name, DefinitionName = DefinitionName, DefinitionVersion = DefinitionVersion, InputJson = InputJson,
        Cron = Cron, TimeZone = TimeZone, IntervalSeconds = IntervalSeconds, StartAt = StartAt is { } start ? InstanceDocument.Utc(start) : null,
        EndAt = EndAt is { } end ? InstanceDocument.Utc(end) : null, JitterSeconds = JitterSeconds, BusinessKeyTemplate = BusinessKeyTemplate,
        Overlap = Overlap, CatchUp = CatchUp, CatchUpWindowSeconds = CatchUpWindowSeconds, Enabled = Enabled, PausedReason = PausedReason,
        NextFireMs = NextFireMs, DueAtMs = DueAtMs, BufferedFireMs = BufferedFireMs, LastInstanceId = LastInstanceId,
        Recent = Recent.ConvertAll(a => a.ToModel()), LeaseOwner = LeaseOwner, LeaseUntilMs = LeaseUntilMs, LeaseToken = LeaseToken,
        CreatedAt = InstanceDocument.Utc(CreatedAt), UpdatedAt = InstanceDocument.Utc(UpdatedAt), Version = Version,
    };
}

/// <summary>One of a schedule's recent actions, inside its document.</summary>
internal sealed class ScheduleActionDocument
{
    [BsonElement("fireTime")] public DateTime FireTime { get; set; }
    [BsonElement("outcome")] public string Outcome { get; set; } = "";
    [BsonElement("instanceId")] [BsonGuidRepresentation(GuidRepresentation.Standard)] public Guid? InstanceId { get; set; }
    [BsonElement("detail")] public string? Detail { get; set; }
    [BsonElement("at")] public DateTime At { get; set; }

    public static ScheduleActionDocument From(ScheduleAction a) =>
        new() { FireTime = a.FireTime, Outcome = a.Outcome, InstanceId = a.InstanceId, Detail = a.Detail, At = a.At };

    public ScheduleAction ToModel() => new(InstanceDocument.Utc(FireTime), Outcome, InstanceId, Detail, InstanceDocument.Utc(At));
}
