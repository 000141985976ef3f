using System.ComponentModel.DataAnnotations;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// How long ended instances are kept ("Retention" section). No instance is deleted unless a period is set: globally
/// (<see cref="EndedInstances"/>) or per definition (<see cref="Definitions"/>, which wins over the global one).
/// Delivered events' deliveries are kept for <see cref="DeliveredEvents"/>.
/// </summary>
public sealed class RetentionOptions
{
    public const string Section = "Retention";

    /// <summary>How long an instance is kept after it ended (Completed, Failed, Cancelled); unset keeps every one.</summary>
    [Range(typeof(TimeSpan), "00:01:00", "36500.00:00:00")]
    public TimeSpan? EndedInstances { get; set; }

    /// <summary>Periods for single definitions by name, over <see cref="EndedInstances"/> (a long one keeps a definition's instances longer).</summary>
    [RetentionPeriods]
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Usage", "CA2227:Collection properties should be read only", Justification = "Bound from configuration.")]
    public Dictionary<string, TimeSpan> Definitions { get; set; } = new(StringComparer.Ordinal);

    /// <summary>
    /// How long a delivered event's delivery (the delivery log's row) is kept after its receiver's 2xx, even while its
    /// instance runs (default 7 days); unset (an empty value) keeps them until their instance is purged. Dead-lettered
    /// deliveries are never purged by age: they wait for an operator's replay until their instance or subscription goes.
    /// </summary>
    [Range(typeof(TimeSpan), "00:01:00", "36500.00:00:00")]
    public TimeSpan? DeliveredEvents { get; set; } = TimeSpan.FromDays(7);

    /// <summary>How often the job looks for instances whose period is over (default 5 minutes).</summary>
    [Range(typeof(TimeSpan), "00:00:00.100", "1.00:00:00")]
    public TimeSpan Interval { get; set; } = TimeSpan.FromMinutes(5);

    /// <summary>Instances deleted in one transaction (default 200): small enough that a deletion never holds the hot path up.</summary>
    [Range(1, 10_000)]
    public int BatchSize { get; set; } = 200;

    /// <summary>
    /// The pause between two batches, leaving the database to the hot path (default 200 ms: some 900 instances a second
    /// at most, a tenth of the embedded store's writer time; shorter catches up on a backlog faster and costs the hot path
    /// more, docs/benchmarks/retention-2026-11-25.md).
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00", "00:01:00")]
    public TimeSpan BatchPause { get; set; } = TimeSpan.FromMilliseconds(200);

    /// <summary>How long one node's turn at the job lasts before it must renew it (default 1 minute); another node takes over after it.</summary>
    [Range(typeof(TimeSpan), "00:00:01", "01:00:00")]
    public TimeSpan LeaseDuration { get; set; } = TimeSpan.FromMinutes(1);

    /// <summary>
    /// Where deleted instances are archived first, as JSON lines (an instance with its history, signals and tasks per line):
    /// <c>stdout</c>, or a file path to append to; unset deletes without an archive.
    /// </summary>
    public string? Export { get; set; }

    /// <summary>Whether any period is set (otherwise the job has nothing to do).</summary>
    public bool Enabled => EndedInstances is not null || Definitions.Count > 0 || DeliveredEvents is not null;
}

/// <summary>Every per-definition period at least a minute, told with its key.</summary>
[AttributeUsage(AttributeTargets.Property)]
public sealed class RetentionPeriodsAttribute : ValidationAttribute
{
    protected override ValidationResult? IsValid(object? value, ValidationContext validationContext)
    {
        ArgumentNullException.ThrowIfNull(validationContext);
        if (value is not IReadOnlyDictionary<string, TimeSpan> periods)
        {
            return ValidationResult.Success;
        }

        var wrong = periods.Where(p => p.Value < TimeSpan.FromMinutes(1) || p.Value > TimeSpan.FromDays(36_500))
            .Select(p => $"{validationContext.DisplayName}:{p.Key} must be between 00:01:00 and 36500.00:00:00 (it is {p.Value}).")
            .ToList();
        return wrong.Count == 0 ? ValidationResult.Success : new ValidationResult(string.Join(" ", wrong));
    }
}
