namespace WorkflowService.Engine.Search.Query;

/// <summary>
/// A field a filter or an orderBy may name: a definition's declared search attribute, or one of the instance's own
/// fields when <paramref name="BuiltIn"/>.
/// </summary>
public sealed record SearchField(string Name, SearchValueType Type, bool BuiltIn);
