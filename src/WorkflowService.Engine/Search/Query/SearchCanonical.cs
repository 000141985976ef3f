using System.Globalization;
using System.Text;

namespace WorkflowService.Engine.Search.Query;

/// <summary>
/// Writes a filter or an orderBy back as text that parses to an equal tree: lower-case keywords, one space around
/// operators, parentheses only where precedence needs them, numbers invariant, datetimes in UTC with Z.
/// </summary>
internal static class SearchCanonical
{
    public static string Write(SearchFilter filter)
    {
        var text = new StringBuilder();
        Write(filter, text);
        return text.ToString();
    }

    public static string Write(IReadOnlyList<SearchOrder> order) =>
        string.Join(", ", order.Select(o => o.Descending ? $"{o.Field.Name} desc" : $"{o.Field.Name} asc"));

    private static void Write(SearchFilter filter, StringBuilder text)
    {
        switch (filter)
        {
            case OrFilter any:
                Join(any.Items, " or ", item => item is OrFilter, text);
                break;
            case AndFilter all:
                Join(all.Items, " and ", item => item is AndFilter or OrFilter, text);
                break;
            case NotFilter negated:
                text.Append("not ");
                Operand(negated.Inner, negated.Inner is AndFilter or OrFilter, text);
                break;
            case ComparisonFilter comparison:
                text.Append(comparison.Field.Name).Append(' ').Append(Operator(comparison.Operator)).Append(' ');
                Value(comparison.Value, text);
                break;
            case InFilter @in:
                text.Append(@in.Field.Name).Append(" in (");
                for (var i = 0; i < @in.Values.Count; i++)
                {
                    text.Append(i == 0 ? "" : ", ");
                    Value(@in.Values[i], text);
                }

                text.Append(')');
                break;
            case PrefixFilter prefix:
                text.Append(prefix.Field.Name).Append(" startsWith ");
                Value(prefix.Prefix, text);
                break;
            default:
                throw new ArgumentException($"{filter.GetType().Name} has no text form", nameof(filter));
        }
    }

    private static void Join(IReadOnlyList<SearchFilter> items, string separator, Func<SearchFilter, bool> needsParentheses, StringBuilder text)
    {
        for (var i = 0; i < items.Count; i++)
        {
            text.Append(i == 0 ? "" : separator);
            Operand(items[i], needsParentheses(items[i]), text);
        }
    }

    private static void Operand(SearchFilter filter, bool parenthesize, StringBuilder text)
    {
        text.Append(parenthesize ? "(" : "");
        Write(filter, text);
        text.Append(parenthesize ? ")" : "");
    }

    private static string Operator(ComparisonOperator op) => op switch
    {
        ComparisonOperator.Equal => "=",
        ComparisonOperator.NotEqual => "!=",
        ComparisonOperator.Less => "<",
        ComparisonOperator.LessOrEqual => "<=",
        ComparisonOperator.Greater => ">",
        _ => ">=",
    };

    private static void Value(object value, StringBuilder text)
    {
        switch (value)
        {
            case string s:
                text.Append('"').Append(s.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("\"", "\\\"", StringComparison.Ordinal)).Append('"');
                break;
            case decimal number:
                text.Append(number.ToString(CultureInfo.InvariantCulture));
                break;
            case DateTimeOffset instant:
                text.Append('"').Append(instant.UtcDateTime.ToString("yyyy-MM-dd'T'HH:mm:ss.FFFFFFF'Z'", CultureInfo.InvariantCulture)).Append('"');
                break;
            case bool flag:
                text.Append(flag ? "true" : "false");
                break;
            default:
                throw new ArgumentException($"a search value is a string, decimal, DateTimeOffset or bool, not {value.GetType().Name}", nameof(value));
        }
    }
}
