using System.ComponentModel.DataAnnotations;

namespace WorkflowService.Engine.Schedules;

/// <summary>Schedules and the node's schedule runner ("Schedules" section).</summary>
public sealed class ScheduleOptions
{
    public const string Section = "Schedules";

    /// <summary>Whether this node fires schedules (an API-only node sets false; the API still manages them).</summary>
    public bool Enabled { get; set; } = true;

    /// <summary>The safety-net poll when nothing on this node changed a schedule; bounds a fire's delay (default 1 s).</summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "00:10:00")]
    public TimeSpan PollInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>How long a claim holds a schedule; a dead node's claims expire after this (default 30 s).</summary>
    [Range(typeof(TimeSpan), "00:00:01", "01:00:00")]
    public TimeSpan LeaseDuration { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>Schedules claimed by one poll (default 16).</summary>
    [Range(1, 1000)]
    public int ClaimBatch { get; set; } = 16;

    /// <summary>An occurrence this late after its time (and jitter) was missed, and its catch-up policy decides (default 1 min).</summary>
    [Range(typeof(TimeSpan), "00:00:01", "1.00:00:00")]
    public TimeSpan LateAfter { get; set; } = TimeSpan.FromMinutes(1);

    /// <summary>The furthest back a schedule catches up after downtime, and the largest catch-up window a schedule may ask for (default 7 days).</summary>
    [Range(typeof(TimeSpan), "00:00:01", "366.00:00:00")]
    public TimeSpan MaxCatchUpWindow { get; set; } = TimeSpan.FromDays(7);

    /// <summary>The most occurrences one pass over a schedule starts; a longer catch-up continues in the next pass (default 100).</summary>
    [Range(1, 10000)]
    public int MaxOccurrencesPerPass { get; set; } = 100;

    /// <summary>The most occurrences one backfill request starts (default 500).</summary>
    [Range(1, 100000)]
    public int MaxBackfillOccurrences { get; set; } = 500;

    /// <summary>The shortest interval an interval schedule may have (default 1 s).</summary>
    [Range(typeof(TimeSpan), "00:00:01", "1.00:00:00")]
    public TimeSpan MinInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The largest jitter a schedule may ask for (default 1 h).</summary>
    [Range(typeof(TimeSpan), "00:00:00", "1.00:00:00")]
    public TimeSpan MaxJitter { get; set; } = TimeSpan.FromHours(1);

    /// <summary>How many schedules one tenant may hold (default 1000).</summary>
    [Range(1, 1000000)]
    public int MaxSchedulesPerTenant { get; set; } = 1000;

    /// <summary>How many of its recent actions a schedule keeps for its list and page (default 10).</summary>
    [Range(1, 100)]
    public int RecentActions { get; set; } = 10;

    /// <summary>How many upcoming fire times a schedule's view shows (default 5).</summary>
    [Range(1, 50)]
    public int NextFireTimesShown { get; set; } = 5;

    /// <summary>Pause after a store error in the runner before it tries again (default 1 s).</summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "00:05:00")]
    public TimeSpan ErrorBackoff { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>How long shutdown waits to hand this node's claims back (default 5 s).</summary>
    [Range(typeof(TimeSpan), "00:00:00", "00:05:00")]
    public TimeSpan ShutdownTimeout { get; set; } = TimeSpan.FromSeconds(5);

    public CatchUpLimits Limits => new((long)LateAfter.TotalMilliseconds, (long)MaxCatchUpWindow.TotalMilliseconds, MaxOccurrencesPerPass);
}
