using System.Globalization;

namespace WorkflowService.RunnerBackends;

/// <summary>
/// An instance a schedule started, as the store holds it: the occurrence comes from its idempotency key
/// (<c>schedule:{schedule id}:{fire time in Unix ms}</c>, the service's OccurrenceStarter.KeyOf), and
/// <see cref="CreatedAt"/> is the store's clock when the instance was written.
/// </summary>
internal sealed record ScheduledStart(Guid InstanceId, Guid ScheduleId, long FireMs, DateTime CreatedAt)
{
    public const string KeyPrefix = "schedule:";

    /// <summary>How long after its occurrence's time the instance was created (negative: early).</summary>
    public TimeSpan Delay => new DateTimeOffset(CreatedAt) - DateTimeOffset.FromUnixTimeMilliseconds(FireMs);

    /// <summary>The start that <paramref name="idempotencyKey"/> names; a key of another shape fails loudly (the checker must not guess).</summary>
    public static ScheduledStart Parse(Guid instanceId, string idempotencyKey, DateTime createdAt)
    {
        var parts = idempotencyKey.Split(':');
        if (parts.Length != 3 || parts[0] + ":" != KeyPrefix || !Guid.TryParseExact(parts[1], "N", out var schedule)
            || !long.TryParse(parts[2], NumberStyles.None, CultureInfo.InvariantCulture, out var fireMs))
        {
            throw new FormatException($"instance {instanceId}: idempotency key '{idempotencyKey}' is not schedule:{{id:N}}:{{fire ms}}");
        }

        return new ScheduledStart(instanceId, schedule, fireMs, DateTime.SpecifyKind(createdAt, DateTimeKind.Utc));
    }
}
