namespace WorkflowService.Storage.Relational;

/// <summary>
/// The partial index of a search attribute slot: (tenant, value, id) over the instances that have a value, which serves a
/// filter, a sort and its keyset seek. Since schema 17 a slot has one only while an attribute uses it.
/// </summary>
internal static class SlotIndexes
{
    public static string Name(string slot) => $"ix_wf_instances_tenant_{slot}_id";

    public static string Definition(string slot) => $"ON wf_instances (tenant, {slot}, id) WHERE {slot} IS NOT NULL";
}
