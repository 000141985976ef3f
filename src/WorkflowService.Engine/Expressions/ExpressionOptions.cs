using System.ComponentModel.DataAnnotations;

namespace WorkflowService.Engine.Expressions;

/// <summary>Sandbox limits for one expression evaluation (section "Expressions" of appsettings.json).</summary>
public sealed class ExpressionOptions
{
    public const string Section = "Expressions";

    /// <summary>Wall-clock budget of one evaluation; a runaway loop is stopped here (default 1 s).</summary>
    [Range(typeof(TimeSpan), "00:00:00.001", "00:01:00")]
    public TimeSpan Timeout { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Bytes one evaluation may allocate (default 16 MiB).</summary>
    [Range(1024, long.MaxValue)]
    public long MemoryLimitBytes { get; set; } = 16 * 1024 * 1024;

    /// <summary>Deepest call recursion an expression may reach (default 64).</summary>
    [Range(1, 10_000)]
    public int RecursionLimit { get; set; } = 64;

    /// <summary>Statements one evaluation may execute (default 100,000).</summary>
    [Range(1, int.MaxValue)]
    public int MaxStatements { get; set; } = 100_000;

    /// <summary>
    /// Elements one array may hold (default 1,000,000). Checked before the array is allocated, so <c>new Array(n)</c>
    /// fails at once instead of allocating past the memory limit.
    /// </summary>
    [Range(1, 100_000_000)]
    public int MaxArrayLength { get; set; } = 1_000_000;

    /// <summary>
    /// Characters <c>repeat</c>, <c>padStart</c> and <c>padEnd</c> may produce (default 4,194,304: 8 MiB). Checked before
    /// the string is built; other strings grow a statement at a time and are held by the memory limit.
    /// </summary>
    [Range(1, 536_870_888)]
    public int MaxStringLength { get; set; } = 4 * 1024 * 1024;
}
