using System.ComponentModel.DataAnnotations;

namespace WorkflowService.Engine.Search.Query;

/// <summary>
/// Limits on one filter and one orderBy; the host binds them from configuration and validates them at start-up. The
/// depth stays small so that parsing can never exhaust the stack, whatever the text.
/// </summary>
public sealed record SearchQueryOptions
{
    /// <summary>Characters a filter or an orderBy may have (default 4,096).</summary>
    [Range(1, 65_536)]
    public int MaxLength { get; set; } = 4096;

    /// <summary>Predicates (comparisons, in, startsWith, between) one filter may have (default 32).</summary>
    [Range(1, 1024)]
    public int MaxPredicates { get; set; } = 32;

    /// <summary>Levels of parentheses and not one filter may nest (default 16).</summary>
    [Range(1, 64)]
    public int MaxDepth { get; set; } = 16;

    /// <summary>Values one in list may have (default 100).</summary>
    [Range(1, 10_000)]
    public int MaxInValues { get; set; } = 100;

    /// <summary>Fields one orderBy may have (default 4).</summary>
    [Range(1, 16)]
    public int MaxOrderFields { get; set; } = 4;
}
