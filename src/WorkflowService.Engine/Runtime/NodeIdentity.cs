using Microsoft.Extensions.Options;

namespace WorkflowService.Engine.Runtime;

/// <summary>The name this node writes into its claims.</summary>
public sealed class NodeIdentity(IOptions<WorkerOptions> options)
{
    public string Id { get; } = string.IsNullOrWhiteSpace(options.Value.NodeId)
        ? $"{Environment.MachineName}-{Environment.ProcessId}-{Guid.NewGuid().ToString("N")[..6]}"
        : options.Value.NodeId!;
}
