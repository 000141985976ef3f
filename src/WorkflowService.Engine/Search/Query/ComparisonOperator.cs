namespace WorkflowService.Engine.Search.Query;

/// <summary>=, !=, &lt;, &lt;=, &gt;, &gt;=.</summary>
public enum ComparisonOperator
{
    Equal,
    NotEqual,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}
