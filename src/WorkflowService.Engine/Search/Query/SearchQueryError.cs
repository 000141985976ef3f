namespace WorkflowService.Engine.Search.Query;

/// <summary>
/// Why a filter or an orderBy was refused, worded for the client ("filter: 'regoin' is not a declared search
/// attribute"). <paramref name="Position"/> counts characters from 0 in the text the client sent; <paramref name="Field"/>
/// names the field the error is about, when there is one.
/// </summary>
public sealed record SearchQueryError(string Message, int Position, string? Field);
