using System.ComponentModel.DataAnnotations;

namespace WorkflowService.Engine.Runtime;

/// <summary>The hosted signal workers of one node ("Workers" section).</summary>
public sealed class WorkerOptions
{
    public const string Section = "Workers";

    /// <summary>Whether this node runs signal workers at all (an API-only node sets false).</summary>
    public bool Enabled { get; set; } = true;

    /// <summary>Signals processed at once on this node; also the largest claim batch (default 8).</summary>
    [Range(1, 256)]
    public int SignalWorkers { get; set; } = 8;

    /// <summary>How long a claim holds a signal; a dead node's claims expire after this (default 30 s).</summary>
    [Range(typeof(TimeSpan), "00:00:00.100", "01:00:00")]
    public TimeSpan LeaseDuration { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>The safety-net poll when no wake-up arrives; bounds the delay of a lost wake-up (default 1 s).</summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "00:10:00")]
    public TimeSpan PollInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>How long shutdown waits for running signals before releasing claims (default 10 s).</summary>
    [Range(typeof(TimeSpan), "00:00:00", "00:05:00")]
    public TimeSpan ShutdownTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>Pause after a store error in the dispatcher loop before it tries again (default 1 s).</summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "00:05:00")]
    public TimeSpan ErrorBackoff { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>This node's name in claims; empty means host name, process id and a random suffix.</summary>
    public string? NodeId { get; set; }

    /// <summary>Longest wait a client may ask for on a long-poll (default 60 s).</summary>
    [Range(typeof(TimeSpan), "00:00:00", "00:10:00")]
    public TimeSpan MaxLongPoll { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>How often a long-poll re-reads the store, for changes committed by other nodes (default 1 s).</summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "00:01:00")]
    public TimeSpan LongPollRecheck { get; set; } = TimeSpan.FromSeconds(1);
}
