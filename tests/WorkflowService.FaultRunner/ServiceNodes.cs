using System.Globalization;
using WorkflowService.Testing.Processes;

namespace WorkflowService.FaultRunner;

/// <summary>One service node of a fault run: its name in claims (Workers:NodeId) and the process that runs it now, if any.</summary>
internal sealed class ServiceNode(string name)
{
    public string Name { get; } = name;

    /// <summary>The running process; null while the node is down (killed or stopped, not yet started again).</summary>
    public ServiceProcess? Process { get; set; }

    /// <summary>Frozen by SIGSTOP: the process exists but answers nothing.</summary>
    public bool Frozen { get; set; }

    public bool IsUp => Process is { HasExited: false } && !Frozen;

    /// <summary>SIGKILL, then the node is down until started again.</summary>
    public async Task KillAsync()
    {
        if (Process is { } process)
        {
            await process.CrashAsync();
            await process.DisposeAsync();
            Process = null;
            Frozen = false;
        }
    }

    /// <summary>SIGTERM (graceful: the node releases its claims), waiting for the exit.</summary>
    public async Task StopAsync()
    {
        if (Process is { } process)
        {
            await process.StopAsync();
            await process.DisposeAsync();
            Process = null;
            Frozen = false;
        }
    }

    public void Freeze()
    {
        Process?.Freeze();
        Frozen = true;
    }

    public void Thaw()
    {
        Process?.Thaw();
        Frozen = false;
    }
}

/// <summary>
/// The service nodes of a fault run on one database: started, killed, frozen, stopped and started again by the scenario,
/// each node keeping its name across restarts (as a pod keeps its name in a StatefulSet).
/// </summary>
internal sealed class ServiceNodes(string serviceDll, IReadOnlyDictionary<string, string> environment, string workDirectory, string apiKey)
    : IAsyncDisposable
{
    private readonly List<ServiceNode> _nodes = [];
    private readonly Dictionary<string, IReadOnlyDictionary<string, string>> _own = [];
    private int _rotation;

    public IReadOnlyList<ServiceNode> All => _nodes;

    /// <summary>Starts <paramref name="count"/> nodes at once on the (empty) database.</summary>
    public async Task StartAsync(int count, CancellationToken cancellationToken)
    {
        var added = Enumerable.Range(_nodes.Count, count).Select(i => new ServiceNode($"node-{i}")).ToList();
        _nodes.AddRange(added);
        await Task.WhenAll(added.Select(n => StartAsync(n, cancellationToken)));
    }

    /// <summary>Settings of one node (by name) over the shared ones, for every start of it from now on.</summary>
    public void Configure(string node, IReadOnlyDictionary<string, string> settings) => _own[node] = settings;

    public async Task StartAsync(ServiceNode node, CancellationToken cancellationToken)
    {
        var settings = new Dictionary<string, string>(environment) { ["Workers__NodeId"] = node.Name };
        foreach (var (key, value) in _own.GetValueOrDefault(node.Name) ?? new Dictionary<string, string>())
        {
            settings[key] = value;
        }

        var workers = int.Parse(settings.GetValueOrDefault("Workers__SignalWorkers", "8"), CultureInfo.InvariantCulture);
        node.Process = await ServiceProcess.StartAsync(serviceDll, settings, workers, workDirectory, apiKey, cancellationToken);
        node.Frozen = false;
    }

    /// <summary>The address of a node that is up, taking turns; null while none is.</summary>
    public Uri? NextAddress()
    {
        // The scenario starts and kills nodes meanwhile: read each node's process once.
        var up = _nodes.Select(n => (Process: n.Process, n.Frozen)).Where(n => n.Process is { HasExited: false } && !n.Frozen)
            .Select(n => n.Process!.Address).ToList();
        return up.Count == 0 ? null : up[(int)((uint)Interlocked.Increment(ref _rotation) % up.Count)];
    }

    /// <summary>Log files of every process the run started, for a failing row's reader.</summary>
    public string WorkDirectory => workDirectory;

    public async ValueTask DisposeAsync()
    {
        foreach (var node in _nodes)
        {
            await node.StopAsync();
        }
    }
}
