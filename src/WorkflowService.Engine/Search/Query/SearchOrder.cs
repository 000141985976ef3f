namespace WorkflowService.Engine.Search.Query;

/// <summary>One key of an orderBy.</summary>
public sealed record SearchOrder(SearchField Field, bool Descending);
