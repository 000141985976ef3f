namespace WorkflowService.Engine.Schedules;

/// <summary>
/// A tenant's standing order to start a definition on a calendar (a cron expression in a time zone, or a fixed
/// interval), with what it does about overlapping runs and occurrences missed while no node ran it. The state part
/// (cursor, buffer, recent actions) is written by the node that holds its lease.
/// </summary>
public sealed class Schedule
{
    public Guid Id { get; set; }
    /// <summary>The tenant it belongs to ("" is the default tenant); names are unique per tenant.</summary>
    public string Tenant { get; set; } = "";
    public required string Name { get; set; }
    public required string DefinitionName { get; set; }
    /// <summary>The version it starts; null for the latest at each occurrence.</summary>
    public int? DefinitionVersion { get; set; }
    public string? InputJson { get; set; }
    /// <summary>A cron expression (5 fields, or 6 with seconds first); null for an interval schedule.</summary>
    public string? Cron { get; set; }
    /// <summary>The IANA time zone the cron expression reads its fields in.</summary>
    public string TimeZone { get; set; } = "UTC";
    /// <summary>The fixed interval in seconds; null for a cron schedule.</summary>
    public long? IntervalSeconds { get; set; }
    public DateTime? StartAt { get; set; }
    public DateTime? EndAt { get; set; }
    /// <summary>Each occurrence starts up to this many seconds after its time (the same delay on every node).</summary>
    public long JitterSeconds { get; set; }
    public required string BusinessKeyTemplate { get; set; }
    public ScheduleOverlap Overlap { get; set; } = ScheduleOverlap.Skip;
    public ScheduleCatchUp CatchUp { get; set; } = ScheduleCatchUp.Skip;
    /// <summary>How old a missed occurrence may be and still run (<see cref="ScheduleCatchUp.All"/>).</summary>
    public long? CatchUpWindowSeconds { get; set; }
    public bool Enabled { get; set; } = true;
    public string? PausedReason { get; set; }

    /// <summary>The next occurrence not yet handled, in Unix milliseconds; null when the calendar has ended.</summary>
    public long? NextFireMs { get; set; }
    /// <summary>When a node should next look at it (the next occurrence plus its jitter, sooner while one is buffered); null while paused or ended.</summary>
    public long? DueAtMs { get; set; }
    /// <summary>The occurrence held back by <see cref="ScheduleOverlap.BufferOne"/> until the running instance ends.</summary>
    public long? BufferedFireMs { get; set; }
    /// <summary>The instance it started last: the one the overlap policy looks at.</summary>
    public Guid? LastInstanceId { get; set; }
    /// <summary>What it did lately, newest first (at most Schedules:RecentActions).</summary>
    public IReadOnlyList<ScheduleAction> Recent { get; set; } = [];

    public string? LeaseOwner { get; set; }
    public long? LeaseUntilMs { get; set; }
    /// <summary>Changes with every claim: a write by a node whose lease was taken over is refused.</summary>
    public long LeaseToken { get; set; }

    public DateTime CreatedAt { get; set; }
    public DateTime UpdatedAt { get; set; }
    /// <summary>Counts its changes; a write checks it (another caller's or node's change in between is not overwritten).</summary>
    public int Version { get; set; }

    public Schedule Clone() => (Schedule)MemberwiseClone();

    /// <summary>
    /// Sets <see cref="DueAtMs"/> from the cursor (its occurrence plus jitter), or to <paramref name="recheckAtMs"/> if
    /// sooner while an occurrence is buffered; none while paused or ended.
    /// </summary>
    public void SetDue(long? recheckAtMs = null)
    {
        long? due = Enabled && NextFireMs is { } next ? next + ScheduleJitter.Of(this).For(next) : null;
        if (Enabled && BufferedFireMs is not null && recheckAtMs is { } recheck)
        {
            due = due is { } d ? Math.Min(d, recheck) : recheck;
        }

        DueAtMs = due;
    }
}

/// <summary>What an occurrence does while the instance the schedule started last is still open.</summary>
public enum ScheduleOverlap
{
    /// <summary>The occurrence is skipped.</summary>
    Skip,
    /// <summary>One occurrence waits and starts when the open instance ends; more are skipped.</summary>
    BufferOne,
    /// <summary>The occurrence starts anyway.</summary>
    AllowAll,
    /// <summary>The open instance is cancelled and the occurrence starts.</summary>
    CancelPrevious,
}

/// <summary>What a schedule does with occurrences that passed while no node ran it (downtime, a long pass).</summary>
public enum ScheduleCatchUp
{
    /// <summary>Missed occurrences are skipped; only those within Schedules:LateAfter of their time run.</summary>
    Skip,
    /// <summary>Only the newest missed occurrence runs.</summary>
    Last,
    /// <summary>Every missed occurrence within the schedule's catch-up window runs, oldest first.</summary>
    All,
}

/// <summary>One thing a schedule did: an occurrence started, found started, skipped, buffered or failed.</summary>
public sealed record ScheduleAction(DateTime FireTime, string Outcome, Guid? InstanceId, string? Detail, DateTime At)
{
    public const string Started = "started";
    public const string AlreadyStarted = "alreadyStarted";
    public const string Skipped = "skipped";
    public const string Buffered = "buffered";
    public const string Failed = "failed";
}
