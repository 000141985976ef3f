namespace WorkflowService.Engine.Search.Query;

/// <summary>The inner filter does not hold.</summary>
public sealed record NotFilter(SearchFilter Inner) : SearchFilter;
