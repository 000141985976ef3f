using System.Globalization;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// An instance query as hand-written SQL over wf_instances: the list's own parameters, the filter (over the instance's
/// columns and the tenant's slot columns), the order and its keyset position. Every value goes in as a parameter; only
/// column names (the store's own) are written into the text.
/// </summary>
internal sealed class SearchSql(SqlDialect dialect, IReadOnlyDictionary<string, DeclaredSearchAttribute> declared)
{
    /// <summary>The column of a field: an instance column for a built-in, the attribute's slot otherwise.</summary>
    public string Column(SearchField field) => field.Name switch
    {
        _ when !field.BuiltIn => declared.TryGetValue(field.Name, out var attribute) && attribute.Type == field.Type
            ? attribute.Slot
            : throw new ArgumentException($"'{field.Name}' is not a declared search attribute of the tenant", nameof(field)),
        "status" => "status",
        "definition" => "definition_name",
        "businessKey" => "business_key",
        "createdAt" => "created_at",
        "updatedAt" => "updated_at",
        _ => throw new ArgumentException($"'{field.Name}' is not an instance field", nameof(field)),
    };

    /// <summary>"FROM wf_instances WHERE …": the tenant, the list's parameters and the filter; the keyset position too when <paramref name="seek"/>.</summary>
    public SqlStatement From(SqlStatement statement, InstanceQuery query, bool seek)
    {
        statement.Sql(" FROM wf_instances WHERE tenant = ").Param(query.Tenant);
        if (query.DefinitionName is not null) statement.Sql(" AND definition_name = ").Param(query.DefinitionName);
        if (query.DefinitionVersion is { } version) statement.Sql(" AND definition_version = ").Param(version);
        if (query.Status is { } status) statement.Sql(" AND status = ").Param(status.ToString());
        if (query.BusinessKey is not null) statement.Sql(" AND business_key = ").Param(query.BusinessKey);
        if (query.CreatedFrom is { } from) statement.Sql(" AND created_at >= ").Param(from);
        if (query.CreatedTo is { } to) statement.Sql(" AND created_at < ").Param(to);
        if (query.ParentId is { } parent) statement.Sql(" AND parent_instance_id = ").Param(parent);
        if (query.Filter is { } filter)
        {
            statement.Sql(" AND ");
            Where(statement, filter);
        }

        if (query.Order is { Field.BuiltIn: false } order)
        {
            // Sorted by an attribute: the instances that have it (the slot's partial index holds exactly those).
            statement.Sql(" AND ").Sql(Column(order.Field)).Sql(" IS NOT NULL");
        }

        if (seek && query.After is { } after)
        {
            Seek(statement, query.Order, after);
        }

        return statement;
    }

    /// <summary>" ORDER BY …": by creation time newest first (the list's own order, then id), or by the order's field then id in its direction.</summary>
    public SqlStatement OrderBy(SqlStatement statement, SearchOrder? order) => order switch
    {
        null or { Field.Name: "createdAt", Descending: true } => statement.Sql(" ORDER BY created_at DESC, id"),
        _ => statement.Sql($" ORDER BY {Column(order.Field)} {Direction(order)}, id {Direction(order)}"),
    };

    /// <summary>
    /// The rows after the position in the order. The first condition alone bounds the index range the seek starts from;
    /// the rest sorts out the rows of the very same value (an OR alone would read the range from its start).
    /// </summary>
    private void Seek(SqlStatement statement, SearchOrder? order, InstancePosition after)
    {
        if (order is null or { Field.Name: "createdAt", Descending: true })
        {
            statement.Sql(" AND created_at <= ").Param(after.CreatedAt).Sql(" AND (created_at < ").Param(after.CreatedAt)
                .Sql(" OR id > ").Param(after.Id).Sql(")");
            return;
        }

        var column = Column(order.Field);
        var value = order.Field.Name == "createdAt" ? after.CreatedAt : Value(order.Field, after.SortValue);
        var (bound, beyond, id) = order.Descending ? ("<=", "<", "<") : (">=", ">", ">");
        statement.Sql($" AND {column} {bound} ").Param(value).Sql($" AND ({column} {beyond} ").Param(value).Sql($" OR id {id} ").Param(after.Id).Sql(")");
    }

    private static string Direction(SearchOrder order) => order.Descending ? "DESC" : "ASC";

    /// <summary>The filter as a condition; "not" is the complement (an instance without the attribute matches "not region = …").</summary>
    public void Where(SqlStatement statement, SearchFilter filter)
    {
        switch (filter)
        {
            case AndFilter and:
                Join(statement, and.Items, " AND ");
                break;
            case OrFilter or:
                Join(statement, or.Items, " OR ");
                break;
            case NotFilter not:
                statement.Sql("NOT COALESCE((");
                Where(statement, not.Inner);
                statement.Sql("), ").Sql(dialect.Name == "sqlite" ? "0" : "FALSE").Sql(")");
                break;
            case ComparisonFilter { Field.Type: SearchValueType.Text, Operator: ComparisonOperator.Equal } words:
                Words(statement, Column(words.Field), (string)words.Value);
                break;
            case ComparisonFilter comparison:
                statement.Sql(Column(comparison.Field)).Sql(Operator(comparison.Operator)).Param(Value(comparison.Field, comparison.Value));
                break;
            case InFilter @in:
                statement.Sql(Column(@in.Field)).Sql(" IN (");
                for (var i = 0; i < @in.Values.Count; i++)
                {
                    statement.Sql(i == 0 ? "" : ", ").Param(Value(@in.Field, @in.Values[i]));
                }

                statement.Sql(")");
                break;
            case PrefixFilter prefix:
                // substr, not LIKE: case-sensitive on both databases, and no wildcard in the prefix to escape.
                statement.Sql("substr(").Sql(Column(prefix.Field)).Sql(string.Create(CultureInfo.InvariantCulture, $", 1, {prefix.Prefix.Length}) = "))
                    .Param(prefix.Prefix);
                break;
            default:
                throw new ArgumentException($"unknown filter {filter.GetType().Name}", nameof(filter));
        }
    }

    private void Join(SqlStatement statement, IReadOnlyList<SearchFilter> items, string separator)
    {
        statement.Sql("(");
        for (var i = 0; i < items.Count; i++)
        {
            statement.Sql(i == 0 ? "" : separator);
            Where(statement, items[i]);
        }

        statement.Sql(")");
    }

    /// <summary>Text "has every word of the value": each word found in the text, ignoring case.</summary>
    private void Words(SqlStatement statement, string column, string value)
    {
        var words = value.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
        var find = dialect.Name == "sqlite" ? "instr" : "strpos";
        statement.Sql("(").Sql(column).Sql(" IS NOT NULL");
        foreach (var word in words)
        {
            statement.Sql($" AND {find}(upper(").Sql(column).Sql("), ").Param(word.ToUpperInvariant()).Sql(") > 0");
        }

        statement.Sql(")");
    }

    private static string Operator(ComparisonOperator op) => op switch
    {
        ComparisonOperator.Equal => " = ",
        ComparisonOperator.NotEqual => " <> ",
        ComparisonOperator.Less => " < ",
        ComparisonOperator.LessOrEqual => " <= ",
        ComparisonOperator.Greater => " > ",
        _ => " >= ",
    };

    /// <summary>A filter's value as its column holds it: a status by its stored name, a number as a double, a time in UTC.</summary>
    private static object Value(SearchField field, object? value) => field.Name switch
    {
        "status" when field.BuiltIn && value is string text && Enum.TryParse<InstanceStatus>(text, ignoreCase: true, out var status) => status.ToString(),
        _ when field.BuiltIn && value is DateTimeOffset at => at.UtcDateTime,
        _ => SearchColumn.ToDatabase(field.Type, value),
    };
}
