namespace WorkflowService.Engine.Search.Query;

/// <summary>A parsed filter: a tree of and, or, not and predicates over typed fields.</summary>
public abstract record SearchFilter;
