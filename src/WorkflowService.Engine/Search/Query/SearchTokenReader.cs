namespace WorkflowService.Engine.Search.Query;

/// <summary>The parsers' cursor over the tokens, and the errors worded from where it stands.</summary>
internal sealed class SearchTokenReader(List<SearchToken> tokens, string label)
{
    private int _next;

    public SearchToken Peek => tokens[_next];

    public SearchToken Take()
    {
        var token = tokens[_next];
        if (token.Kind != SearchTokenKind.End)
        {
            _next++;
        }

        return token;
    }

    /// <summary>Takes the next token when it is the keyword <paramref name="keyword"/>.</summary>
    public bool TakeIf(string keyword)
    {
        if (!Peek.Is(keyword))
        {
            return false;
        }

        _next++;
        return true;
    }

    /// <summary>Takes the next token when it is of <paramref name="kind"/>.</summary>
    public bool TakeIf(SearchTokenKind kind)
    {
        if (Peek.Kind != kind || kind == SearchTokenKind.End)
        {
            return false;
        }

        _next++;
        return true;
    }

    /// <summary>"filter: expected a value at position 9, found the end of the text".</summary>
    public SearchQueryError Expected(string what) =>
        new($"{label}: expected {what} at position {Peek.Position}, found {Peek.Describe()}", Peek.Position, null);

    public SearchQueryError Error(string message, SearchToken at, string? field = null) => new($"{label}: {message}", at.Position, field);

    /// <summary>The next token as a declared field, or the error: not a name, a keyword, or not declared.</summary>
    public SearchQueryError? TakeField(ISearchFieldCatalog fields, string expected, out SearchField field)
    {
        var token = Peek;
        field = null!;
        if (token.Kind != SearchTokenKind.Name || SearchQuery.IsReservedWord(token.Text))
        {
            return Expected(expected);
        }

        Take();
        if (!fields.TryGet(token.Text, out var declared))
        {
            return Error($"'{token.Text}' is not a declared search attribute", token, token.Text);
        }

        field = declared;
        return null;
    }
}
