namespace WorkflowService.Hosting;

/// <summary>How this node learns that signals became due ("WakeUp" section).</summary>
public sealed class WakeUpOptions
{
    public const string Section = "WakeUp";
    public static readonly string[] Transports = ["InProcess"];

    /// <summary>InProcess: wake-ups within this process (the embedded store's transport).</summary>
    public string Transport { get; set; } = "InProcess";
}
