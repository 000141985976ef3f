using System.ComponentModel.DataAnnotations;

namespace WorkflowService.Engine.Search;

/// <summary>Limits of the instance list's search path and of counts by value ("Search" section; the filter's own limits are "Search:Query").</summary>
public sealed class SearchOptions
{
    public const string Section = "Search";

    /// <summary>
    /// Instances a count by value counts at most (default 10,000): counting every match reads every matching row (113 ms
    /// for 11,178 of 1,000,000, docs/benchmarks/search-layout-2026-11-28.md).
    /// </summary>
    [Range(1, 10_000_000)]
    public int MaxCounted { get; set; } = 10_000;

    /// <summary>
    /// Instances a filtered list's total counts at most (default 1,000): every page pays for it, and counting 10,000 of a
    /// match over 1,000,000 instances took 70 to 120 ms where the page took 1 (docs/benchmarks/search-1m-2026-11-28.md).
    /// </summary>
    [Range(1, 10_000_000)]
    public int MaxTotal { get; set; } = 1_000;

    /// <summary>Values a count by value returns at most, most frequent first (default 20; a request may ask for fewer).</summary>
    [Range(1, 1_000)]
    public int MaxCountValues { get; set; } = 20;
}
