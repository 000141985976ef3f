using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using WorkflowService.Testing.Processes;

namespace WorkflowService.Testing;

/// <summary>
/// A pg_auto_failover formation the test or the runner owns: a monitor and two data nodes (a primary and a secondary),
/// each with its own data directory under one temp root and its own loopback port, run by pg_autoctl as the postgres user
/// (runuser, as root). Trust authentication on 127.0.0.1 only and no SSL, for a throwaway cluster that lives as long as
/// one test or fault row. Failing a node over is done to it as to a dead machine: its keeper and its postmaster go at once.
/// </summary>
internal sealed class OwnedAutoFailoverCluster : IAsyncDisposable
{
    /// <summary>
    /// Its name in WORKFLOW_TESTS_REQUIRE_TOOLS: listed there, a machine without pg_auto_failover fails the tests and fault
    /// rows that need a cluster instead of skipping them.
    /// </summary>
    public const string Tool = "pg-auto-failover";

    private const string Autoctl = "/usr/bin/pg_autoctl";
    private const string Runuser = "/usr/sbin/runuser";
    private static readonly TimeSpan CommandDeadline = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan SwitchoverDeadline = TimeSpan.FromSeconds(90);
    private static readonly TimeSpan StopDeadline = TimeSpan.FromSeconds(15);
    private static readonly TimeSpan PollInterval = TimeSpan.FromMilliseconds(250);

    private readonly string _bin;
    private readonly string _root;
    private readonly string _logs;
    private readonly int _monitorPort;
    private readonly List<(string Name, string Data, LoggedProcess Keeper)> _processes = [];

    private OwnedAutoFailoverCluster(string bin, string root, string logs, int monitorPort, int firstPort, int secondPort)
    {
        _bin = bin;
        _root = root;
        _logs = logs;
        _monitorPort = monitorPort;
        Ports = [firstPort, secondPort];
    }

    /// <summary>The data nodes' ports, in the order they were created (the first started as primary).</summary>
    public IReadOnlyList<int> Ports { get; }

    /// <summary>The monitor's URI, as pg_autoctl's --monitor takes it.</summary>
    public string MonitorUri => $"postgres://autoctl_node@127.0.0.1:{_monitorPort}/pg_auto_failover?sslmode=disable";

    /// <summary>Both data nodes in one Npgsql connection string: the driver finds whichever is primary now.</summary>
    public string MultiHostConnectionString =>
        $"Host={string.Join(',', Ports.Select(p => $"127.0.0.1:{p}"))};Target Session Attributes=primary;{Credentials}";

    /// <summary>Why no cluster can be owned on this machine, or null when one can.</summary>
    public static string? Unavailable()
    {
        if (FindBin() is not { } bin)
        {
            return "no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)";
        }

        var version = Path.GetFileName(Path.GetDirectoryName(bin));
        if (!File.Exists(Autoctl))
        {
            return $"pg_autoctl is missing (apt-get install pg-auto-failover-cli postgresql-{version}-auto-failover)";
        }

        if (!File.Exists($"/usr/share/postgresql/{version}/extension/pgautofailover.control"))
        {
            return $"the monitor's extension is missing (apt-get install postgresql-{version}-auto-failover)";
        }

        return !IsRoot ? null
            : !File.Exists(Runuser) ? "running as root and runuser is missing (PostgreSQL refuses to run as root)"
            : !File.ReadLines("/etc/passwd").Any(l => l.StartsWith("postgres:", StringComparison.Ordinal)) ? "running as root and there is no postgres user to run the servers as"
            : null;
    }

    /// <summary>
    /// Creates the monitor, then the first data node (primary), then the second (secondary, cloned from the first), and
    /// waits until the monitor reports one primary and one secondary, within <see cref="AutoFailoverOptions.StartDeadline"/>.
    /// </summary>
    public static async Task<OwnedAutoFailoverCluster> StartAsync(AutoFailoverOptions options, CancellationToken cancellationToken)
    {
        var bin = FindBin() ?? throw new InvalidOperationException(Unavailable());
        var root = Path.Combine(Path.GetTempPath(), $"wf-autofailover-{DateTime.UtcNow:yyyyMMdd-HHmmss}-{Environment.ProcessId}-{Random.Shared.Next(1000):000}");
        var logs = options.LogDirectory ?? root;
        Directory.CreateDirectory(root);
        Directory.CreateDirectory(logs);
        var cluster = new OwnedAutoFailoverCluster(bin, root, logs, LoopbackPort.Free(), LoopbackPort.Free(), LoopbackPort.Free());
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(options.StartDeadline);
        try
        {
            if (IsRoot)
            {
                await SystemTool.RunAsync("chown", ["postgres:postgres", root], deadline.Token);
            }

            cluster.Run("monitor", ["create", "monitor", "--pgdata", cluster.DataOf("monitor"), "--pgport", Text(cluster._monitorPort),
                "--hostname", "127.0.0.1", "--auth", "trust", "--no-ssl", "--ssl-mode", "disable", "--pgctl", Path.Combine(bin, "pg_ctl"), "--run"]);
            await cluster.WaitForAsync(_ => true, "the monitor to answer", deadline.Token);
            await cluster.TuneMonitorAsync(options, deadline.Token);

            cluster.StartDataNode("node1", cluster.Ports[0], AutoFailoverReplication.Synchronous);
            await cluster.WaitForAsync(s => s.Any(n => n is { Name: "node1", IsPrimary: true }), "node1 to run as the single primary", deadline.Token);
            cluster.StartDataNode("node2", cluster.Ports[1], options.Replication);
            await cluster.WaitForAsync(s => s.Count(n => n.IsPrimary) == 1 && s.Any(n => n.ReportedState == "primary") && s.Count(n => n.IsSecondary) == 1,
                "a primary and a secondary", deadline.Token);
            return cluster;
        }
        catch (Exception e) when (e is OperationCanceledException && !cancellationToken.IsCancellationRequested)
        {
            var tails = string.Join('\n', cluster._processes.Select(p => $"--- {p.Name}:\n{p.Keeper.Tail(15)}"));
            await cluster.DisposeAsync();
            throw new TimeoutException($"the pg_auto_failover cluster was not up within {options.StartDeadline.TotalSeconds:0} s\n{tails}", e);
        }
        catch
        {
            await cluster.DisposeAsync();
            throw;
        }
    }

    /// <summary>The monitor's view of the data nodes (<c>pg_autoctl show state --json</c>).</summary>
    public async Task<IReadOnlyList<AutoFailoverNodeState>> StateAsync(CancellationToken cancellationToken)
    {
        var json = await AutoctlAsync(["show", "state", "--monitor", MonitorUri, "--json"], CommandDeadline, cancellationToken);
        return JsonSerializer.Deserialize<List<AutoFailoverNodeState>>(json) ?? [];
    }

    /// <summary>The node the monitor says takes writes now.</summary>
    public async Task<AutoFailoverNodeState> PrimaryAsync(CancellationToken cancellationToken) =>
        (await StateAsync(cancellationToken)).SingleOrDefault(n => n.IsPrimary)
        ?? throw new InvalidOperationException("the monitor reports no primary now");

    /// <summary>A connection string to the node the monitor says is primary now (no multi-host routing).</summary>
    public async Task<string> PrimaryConnectionStringAsync(CancellationToken cancellationToken) => ConnectionStringOf(await PrimaryAsync(cancellationToken));

    /// <summary>A connection string to the node the monitor says is the secondary now.</summary>
    public async Task<string> StandbyConnectionStringAsync(CancellationToken cancellationToken) =>
        ConnectionStringOf((await StateAsync(cancellationToken)).SingleOrDefault(n => n.IsSecondary)
                           ?? throw new InvalidOperationException("the monitor reports no secondary now"));

    /// <summary>A connection string to one data node.</summary>
    public static string ConnectionStringOf(AutoFailoverNodeState node) => $"Host={node.Host};Port={Text(node.Port)};{Credentials}";

    /// <summary>
    /// The current primary's machine dies: SIGSTOP to its postmaster (it forks no new backend), then SIGKILL to its keeper
    /// (pg_autoctl run, which would otherwise start Postgres again on the same node before the monitor noticed), the
    /// postmaster and every process under them. The monitor then fails over to the secondary once its health checks and
    /// timeouts say so. Returns the node that was killed.
    /// </summary>
    public async Task<AutoFailoverNodeState> KillPrimaryPostmasterAsync(CancellationToken cancellationToken)
    {
        var primary = await PrimaryAsync(cancellationToken);
        var (_, data, keeper) = _processes.Single(p => p.Name == primary.Name);
        if (Postmaster(data) is { } postmaster)
        {
            UnixSignal.Send(postmaster, UnixSignal.Stop);
        }

        keeper.Process.Kill(entireProcessTree: true);
        await keeper.Process.WaitForExitAsync(cancellationToken).WaitAsync(StopDeadline, cancellationToken);
        await KillPostmasterAsync(data, cancellationToken);
        return primary;
    }

    /// <summary>A planned switchover (<c>pg_autoctl perform switchover</c>): the secondary is promoted, the primary follows it.</summary>
    public Task SwitchoverAsync(CancellationToken cancellationToken) =>
        AutoctlAsync(["perform", "switchover", "--monitor", MonitorUri], SwitchoverDeadline, cancellationToken);

    /// <summary>Waits until a node other than <paramref name="former"/> is primary, with the monitor's agreement; returns it.</summary>
    public async Task<AutoFailoverNodeState> WaitForPrimaryChangeAsync(AutoFailoverNodeState former, TimeSpan deadline, CancellationToken cancellationToken)
    {
        using var bounded = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        bounded.CancelAfter(deadline);
        try
        {
            var state = await WaitForAsync(s => s.Any(n => n.IsPrimary && n.Name != former.Name), $"a primary other than {former.Name}", bounded.Token);
            return state.Single(n => n.IsPrimary && n.Name != former.Name);
        }
        catch (OperationCanceledException e) when (!cancellationToken.IsCancellationRequested)
        {
            var now = await StateAsync(cancellationToken);
            throw new TimeoutException($"no primary other than {former.Name} within {deadline.TotalSeconds:0} s; the monitor says: {string.Join("; ", now)}", e);
        }
    }

    /// <summary>Stops every keeper and server (SIGKILL: the cluster is thrown away) and removes the directories, bounded.</summary>
    public async ValueTask DisposeAsync()
    {
        foreach (var (_, data, keeper) in Enumerable.Reverse(_processes))
        {
            if (Postmaster(data) is { } postmaster)
            {
                UnixSignal.Send(postmaster, UnixSignal.Stop);
            }

            if (!keeper.Process.HasExited)
            {
                keeper.Process.Kill(entireProcessTree: true);
                await keeper.Process.WaitForExitAsync(CancellationToken.None).WaitAsync(StopDeadline);
            }

            await KillPostmasterAsync(data, CancellationToken.None);
            await keeper.DisposeAsync();
        }

        Directory.Delete(_root, recursive: true);
    }

    private static string Credentials => "Username=postgres;Database=postgres;SSL Mode=Disable";

    private static bool IsRoot => Environment.UserName == "root";

    private static string Text(int number) => number.ToString(CultureInfo.InvariantCulture);

    private static string? FindBin() => OwnedPostgresServer.FindBin();

    /// <summary>The postmaster's process id from its pid file, or null when none runs there.</summary>
    private static int? Postmaster(string data)
    {
        try
        {
            var pid = int.Parse(File.ReadLines(Path.Combine(data, "postmaster.pid")).First(), CultureInfo.InvariantCulture);
            return Directory.Exists($"/proc/{Text(pid)}") ? pid : null;
        }
        catch (Exception e) when (e is IOException or FormatException or InvalidOperationException or UnauthorizedAccessException)
        {
            return null; // no pid file (never started, or stopped cleanly) or one being written
        }
    }

    /// <summary>SIGKILL to a postmaster left running (its keeper gone), and a bounded wait until it has ended.</summary>
    private static async Task KillPostmasterAsync(string data, CancellationToken cancellationToken)
    {
        var until = DateTime.UtcNow + StopDeadline;
        while (Postmaster(data) is { } postmaster)
        {
            UnixSignal.Send(postmaster, UnixSignal.Kill);
            if (DateTime.UtcNow > until)
            {
                throw new TimeoutException($"the postmaster of {data} ({postmaster}) did not end within {StopDeadline.TotalSeconds:0} s of SIGKILL");
            }

            await Task.Delay(PollInterval, cancellationToken);
        }
    }

    private string DataOf(string name) => Path.Combine(_root, name);

    private void StartDataNode(string name, int port, AutoFailoverReplication replication) =>
        Run(name, ["create", "postgres", "--pgdata", DataOf(name), "--pgport", Text(port), "--pghost", _root, "--listen", "127.0.0.1",
            "--hostname", "127.0.0.1", "--name", name, "--auth", "trust", "--no-ssl", "--ssl-mode", "disable", "--pgctl", Path.Combine(_bin, "pg_ctl"),
            "--monitor", MonitorUri, "--replication-quorum", replication == AutoFailoverReplication.Synchronous ? "true" : "false", "--run"]);

    /// <summary>Starts a long-running pg_autoctl (create ... --run) for the node <paramref name="name"/>, its output in the log directory.</summary>
    private void Run(string name, IReadOnlyList<string> arguments) =>
        _processes.Add((name, DataOf(name), LoggedProcess.Start(Command(arguments), Path.Combine(_logs, $"{name}.log"), _ => false)));

    /// <summary>
    /// pg_autoctl with this cluster's own configuration and state directories (XDG_*), and the servers' sockets in the root,
    /// run as the postgres user when this process is root.
    /// </summary>
    private ProcessStartInfo Command(IReadOnlyList<string> arguments)
    {
        string[] environment = [$"XDG_CONFIG_HOME={_root}/config", $"XDG_DATA_HOME={_root}/share", $"XDG_RUNTIME_DIR={_root}/run",
            $"PG_REGRESS_SOCK_DIR={_root}", $"PGHOST={_root}"];
        var start = IsRoot
            ? new ProcessStartInfo(Runuser, ["-u", "postgres", "--", "/usr/bin/env", .. environment, Autoctl, .. arguments])
            : new ProcessStartInfo("/usr/bin/env", [.. environment, Autoctl, .. arguments]);
        start.WorkingDirectory = _root;
        return start;
    }

    /// <summary>Runs a short pg_autoctl command (bounded) and returns its standard output; throws with its errors when it fails.</summary>
    private Task<string> AutoctlAsync(IReadOnlyList<string> arguments, TimeSpan deadline, CancellationToken cancellationToken) =>
        SystemTool.RunAsync(Command(arguments), $"pg_autoctl {string.Join(' ', arguments)}", deadline, cancellationToken);

    /// <summary>
    /// Polls the monitor until <paramref name="condition"/> holds for its state (an unanswered poll counts as not yet);
    /// bounded by <paramref name="cancellationToken"/>, which the callers give a deadline.
    /// </summary>
    private async Task<IReadOnlyList<AutoFailoverNodeState>> WaitForAsync(Func<IReadOnlyList<AutoFailoverNodeState>, bool> condition, string what,
        CancellationToken cancellationToken)
    {
        using var timer = new PeriodicTimer(PollInterval);
        while (true)
        {
            try
            {
                var state = await StateAsync(cancellationToken);
                if (condition(state))
                {
                    return state;
                }
            }
            catch (Exception e) when (e is InvalidOperationException or JsonException)
            {
                // The monitor is not answering yet (starting) or for a moment; the deadline bounds the wait.
            }

            if (!await timer.WaitForNextTickAsync(cancellationToken))
            {
                throw new OperationCanceledException($"waiting for {what}");
            }
        }
    }

    /// <summary>The monitor's failure-detection timeouts, from the options (ALTER SYSTEM on the monitor, then a reload).</summary>
    private async Task TuneMonitorAsync(AutoFailoverOptions options, CancellationToken cancellationToken)
    {
        var unhealthy = (int)options.NodeUnhealthyAfter.TotalMilliseconds;
        // Health checks a few times within the unhealthy timeout, at most every 5 s (pg_auto_failover's default period).
        var period = Math.Min(5000, Math.Max(500, unhealthy / 4));
        var settings = new Dictionary<string, int>
        {
            ["pgautofailover.node_considered_unhealthy_timeout"] = unhealthy,
            ["pgautofailover.primary_demote_timeout"] = (int)options.PrimaryDemoteTimeout.TotalMilliseconds,
            ["pgautofailover.health_check_period"] = period,
            ["pgautofailover.health_check_retry_delay"] = Math.Min(2000, period),
            ["pgautofailover.health_check_timeout"] = Math.Min(5000, period),
        };
        // One -c per statement: ALTER SYSTEM refuses to run in the transaction psql wraps a multi-statement -c in.
        IEnumerable<string> statements = [.. settings.Select(s => $"ALTER SYSTEM SET {s.Key} = {Text(s.Value)}"), "SELECT pg_reload_conf()"];
        var psql = Path.Combine(_bin, "psql");
        string[] arguments = ["-h", _root, "-p", Text(_monitorPort), "-U", "postgres", "-d", "pg_auto_failover", "-v", "ON_ERROR_STOP=1",
            .. statements.SelectMany(s => new[] { "-c", s })];
        await SystemTool.RunAsync(IsRoot ? Runuser : psql, IsRoot ? ["-u", "postgres", "--", psql, .. arguments] : arguments, cancellationToken);
    }
}
