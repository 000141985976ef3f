namespace WorkflowService.Engine.Search.Query;

/// <summary>The type a search attribute is declared with; it decides which operators and values a filter may use on it.</summary>
public enum SearchValueType
{
    /// <summary>A whole value compared exactly (an id, a region, a status).</summary>
    Keyword,

    /// <summary>Prose matched by its words.</summary>
    Text,

    /// <summary>A decimal number.</summary>
    Number,

    /// <summary>An instant, written in ISO 8601 with an offset.</summary>
    DateTime,

    /// <summary>true or false.</summary>
    Bool,
}
