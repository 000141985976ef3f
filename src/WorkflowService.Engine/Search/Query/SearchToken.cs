namespace WorkflowService.Engine.Search.Query;

/// <summary>
/// One token: <paramref name="Text"/> is its text as the client wrote it (a string with its quotes and escapes),
/// <paramref name="Unescaped"/> a string's content.
/// </summary>
internal readonly record struct SearchToken(SearchTokenKind Kind, int Position, string Text, string? Unescaped = null)
{
    /// <summary>True when the token is the keyword <paramref name="keyword"/>, in any case.</summary>
    public bool Is(string keyword) => Kind == SearchTokenKind.Name && string.Equals(Text, keyword, StringComparison.OrdinalIgnoreCase);

    /// <summary>The token as an error message shows it after "found".</summary>
    public string Describe() => Kind switch
    {
        SearchTokenKind.End => "the end of the text",
        SearchTokenKind.String or SearchTokenKind.Number => Text,
        _ => $"'{Text}'",
    };
}
