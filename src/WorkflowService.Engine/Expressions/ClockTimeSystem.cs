using System.Globalization;
using System.Text.RegularExpressions;
using Jint.Runtime;

namespace WorkflowService.Engine.Expressions;

/// <summary>
/// Makes <c>Date.now()</c> and <c>new Date()</c> in expressions read the service's <see cref="TimeProvider"/>, in UTC,
/// and parses only date strings that name their own year: an expression gives the same value on every node and on
/// every day.
/// </summary>
internal sealed partial class ClockTimeSystem(TimeProvider time) : DefaultTimeSystem(TimeZoneInfo.Utc, CultureInfo.InvariantCulture)
{
    public override DateTimeOffset GetUtcNow() => time.GetUtcNow();

    /// <summary>
    /// ECMAScript's date time string format (year first, with or without time and offset) and what <c>toString</c>
    /// and <c>toUTCString</c> give back. Jint would otherwise fall back to .NET's lenient parsing, which fills what the
    /// string leaves out (<c>'10:00'</c>, <c>'Jan 5'</c>) from the machine's clock.
    /// </summary>
    public override bool TryParse(string date, out long epochMilliseconds)
    {
        if (date is null || !(IsoLike().IsMatch(date) || ToStringForm().IsMatch(date) || ToUtcStringForm().IsMatch(date)))
        {
            epochMilliseconds = long.MinValue;
            return false;
        }

        return base.TryParse(date, out epochMilliseconds);
    }

    [GeneratedRegex(@"^\s*(?:[+-]\d{6}|\d{4})(?:[-/]\d{1,2}(?:[-/]\d{1,2})?)?(?:[T ]\d{1,2}:\d{1,2}(?::\d{1,2}(?:\.\d{1,9})?)?\s*(?:Z|[+-]\d{2}:?\d{2})?)?\s*$", RegexOptions.CultureInvariant, 100)]
    private static partial Regex IsoLike();

    [GeneratedRegex(@"^\s*[A-Za-z]{3} [A-Za-z]{3} \d{1,2} -?\d{4,6}(?: \d{2}:\d{2}:\d{2} GMT[+-]\d{4}(?: \([^)]*\))?)?\s*$", RegexOptions.CultureInvariant, 100)]
    private static partial Regex ToStringForm();

    [GeneratedRegex(@"^\s*[A-Za-z]{3}, \d{1,2} [A-Za-z]{3} -?\d{4,6} \d{2}:\d{2}:\d{2} GMT\s*$", RegexOptions.CultureInvariant, 100)]
    private static partial Regex ToUtcStringForm();
}
