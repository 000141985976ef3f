using System.Diagnostics.CodeAnalysis;

namespace WorkflowService.Engine.Search.Query;

/// <summary>What parsing gave: the value, or the error in the client's terms (never both).</summary>
public sealed record SearchParse<T>(T? Value, SearchQueryError? Error)
{
    [MemberNotNullWhen(true, nameof(Value))]
    [MemberNotNullWhen(false, nameof(Error))]
    public bool Succeeded => Error is null && Value is not null;
}
