namespace WorkflowService.Engine.Search.Query;

/// <summary>
/// The field compared with one value. <paramref name="Value"/> matches the field's type: string (keyword, text), decimal
/// (number), DateTimeOffset (datetime) or bool. On a text field, Equal means "has every word of the value"
/// (docs/search-language.md).
/// </summary>
public sealed record ComparisonFilter(SearchField Field, ComparisonOperator Operator, object Value) : SearchFilter;
