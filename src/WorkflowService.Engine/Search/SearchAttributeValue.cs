using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Engine.Search;

/// <summary>
/// One attribute's value as a commit writes it: string (keyword, text), decimal (number), DateTime in UTC (datetime) or
/// bool; null when the expression gave nothing of the attribute's type.
/// </summary>
public sealed record SearchAttributeValue(string Name, SearchValueType Type, object? Value);
