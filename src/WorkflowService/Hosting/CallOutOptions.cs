using System.ComponentModel.DataAnnotations;

namespace WorkflowService.Hosting;

/// <summary>Where http steps may call and how much they may read back ("CallOuts" section).</summary>
public sealed class CallOutOptions
{
    public const string Section = "CallOuts";

    /// <summary>Host names http steps may call (exact, case-insensitive); empty allows any host.</summary>
    public string[] AllowedHosts { get; set; } = [];

    /// <summary>Largest response body read back into the instance, in bytes (default 256 KiB).</summary>
    [Range(1, 16 * 1024 * 1024)]
    public int MaxResponseBytes { get; set; } = 256 * 1024;
}
