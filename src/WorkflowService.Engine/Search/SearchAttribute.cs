using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Engine.Search;

/// <summary>A compiled search attribute: its name, its type, and the expression each commit evaluates for its value.</summary>
public sealed record SearchAttribute(string Name, SearchValueType Type, CompiledExpression Value);
