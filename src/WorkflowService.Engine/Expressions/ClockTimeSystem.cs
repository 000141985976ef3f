using System.Globalization;
using Jint.Runtime;

namespace WorkflowService.Engine.Expressions;

/// <summary>Makes <c>Date.now()</c> and <c>new Date()</c> in expressions read the service's <see cref="TimeProvider"/>, in UTC.</summary>
internal sealed class ClockTimeSystem(TimeProvider time) : DefaultTimeSystem(TimeZoneInfo.Utc, CultureInfo.InvariantCulture)
{
    public override DateTimeOffset GetUtcNow() => time.GetUtcNow();
}
