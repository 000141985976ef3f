using System.ComponentModel.DataAnnotations;

namespace WorkflowService.OperatorConsole;

/// <summary>The operations console at /console ("Console" section).</summary>
public sealed class ConsoleOptions
{
    public const string Section = "Console";

    /// <summary>Whether the console is served (default true); off, /console answers 404 like any unknown path.</summary>
    public bool Enabled { get; set; } = true;

    /// <summary>How long a console sign-in lasts (default 8 hours); a pasted token's own expiry still ends it earlier.</summary>
    [Range(typeof(TimeSpan), "00:01:00", "7.00:00:00")]
    public TimeSpan SessionLifetime { get; set; } = TimeSpan.FromHours(8);

    /// <summary>How long an open instance page waits for the instance's next commit before it asks again (default 25 s).</summary>
    [Range(typeof(TimeSpan), "00:00:01", "00:05:00")]
    public TimeSpan LiveWait { get; set; } = TimeSpan.FromSeconds(25);

    /// <summary>Rows per page in the console's lists (default 25).</summary>
    [Range(5, 200)]
    public int PageSize { get; set; } = 25;
}
