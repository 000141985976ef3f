namespace WorkflowService.Engine.Search.Query;

/// <summary>The kinds of token the filter and orderBy languages are made of.</summary>
internal enum SearchTokenKind
{
    /// <summary>A field name or a keyword ([A-Za-z_][A-Za-z0-9_]*); keywords are told apart by the parser.</summary>
    Name,
    String,
    Number,

    /// <summary>=, !=, &lt;, &lt;=, &gt; or &gt;=.</summary>
    Operator,
    OpenParen,
    CloseParen,
    Comma,
    End,
}
