using System.ComponentModel.DataAnnotations;

namespace WorkflowService.WakeUp.Redis;

/// <summary>The Redis wake-up transport's settings (the "WakeUp:Redis" section).</summary>
public sealed class RedisWakeUpOptions
{
    public const string Section = "Redis";

    /// <summary>A StackExchange.Redis configuration string ("redis:6379", "host:6380,password=…,ssl=true").</summary>
    public string? ConnectionString { get; set; }

    /// <summary>The pub/sub channel every node of one deployment shares (default "workflow-wakeup").</summary>
    [Required]
    [RegularExpression(@"^[A-Za-z0-9_.:\-]{1,100}$", ErrorMessage = "{0} must be letters, digits, '_', '.', ':' and '-', at most 100.")]
    public string Channel { get; set; } = "workflow-wakeup";

    /// <summary>How long one attempt to connect may take (default 5 s); failed attempts are retried with backoff.</summary>
    [Range(typeof(TimeSpan), "00:00:00.100", "00:01:00")]
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(5);
}
