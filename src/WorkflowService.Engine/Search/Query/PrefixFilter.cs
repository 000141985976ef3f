namespace WorkflowService.Engine.Search.Query;

/// <summary>
/// A keyword field starts with <paramref name="Prefix"/> (ordinal, case-sensitive), or a text field has a word that
/// starts with it (docs/search-language.md).
/// </summary>
public sealed record PrefixFilter(SearchField Field, string Prefix) : SearchFilter;
