using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Engine.Search;

/// <summary>
/// A tenant's search attribute: one type across the tenant's definitions, stored in <paramref name="Slot"/> (a typed
/// column of the instance row, or the field of the instance document of that name). Never changes once declared.
/// </summary>
public sealed record DeclaredSearchAttribute(string Name, SearchValueType Type, string Slot);
