using System.Diagnostics;
using System.Globalization;
using WorkflowService.Testing.Processes;

namespace WorkflowService.Testing;

/// <summary>
/// A PostgreSQL server the fault runner owns: Debian's server binaries on a data directory and a loopback port of its
/// own, started and stopped with pg_ctl, so that stopping or pausing "the database" disturbs no other server on the
/// machine. PostgreSQL refuses to run as root: as root the binaries run as the postgres user (runuser).
/// Trust authentication on 127.0.0.1 only, for a throwaway server that lives as long as one fault row.
/// </summary>
internal sealed class OwnedPostgresServer : IAsyncDisposable
{
    private static readonly TimeSpan CommandDeadline = TimeSpan.FromSeconds(60);
    private static readonly TimeSpan StopDeadline = TimeSpan.FromSeconds(10);

    private readonly string _bin;
    private readonly string _data;
    private readonly int _port;
    private List<int> _paused = [];

    private OwnedPostgresServer(string bin, string data, int port)
    {
        _bin = bin;
        _data = data;
        _port = port;
    }

    /// <summary>The admin connection string (user postgres, no password: trust on loopback).</summary>
    public string AdminConnectionString => $"Host=127.0.0.1;Port={_port};Username=postgres;SSL Mode=Disable";

    public int Port => _port;

    /// <summary>Why no server can be owned on this machine, or null when one can (the binaries exist; as root, a postgres user).</summary>
    public static string? Unavailable()
    {
        if (FindBin() is null)
        {
            return "no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)";
        }

        return IsRoot && !File.Exists("/usr/sbin/runuser") ? "running as root and runuser is missing (PostgreSQL refuses to run as root)" : null;
    }

    /// <summary>initdb on a fresh directory under <paramref name="workDirectory"/>'s parent temp area, then starts the server.</summary>
    public static async Task<OwnedPostgresServer> StartAsync(CancellationToken cancellationToken)
    {
        var bin = FindBin() ?? throw new InvalidOperationException(Unavailable());
        var data = Path.Combine(Path.GetTempPath(), $"wf-faults-pg-{DateTime.UtcNow:yyyyMMdd-HHmmss}-{Environment.ProcessId}");
        var server = new OwnedPostgresServer(bin, data, LoopbackPort.Free());
        await server.RunAsync("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-instructions"], cancellationToken);
        await File.AppendAllTextAsync(Path.Combine(data, "postgresql.conf"), string.Join('\n',
            "listen_addresses = '127.0.0.1'",
            $"port = {server._port}",
            $"unix_socket_directories = '{data}'",
            "max_connections = 200",
            "shared_buffers = 128MB",
            "") , cancellationToken);
        await server.StartAgainAsync(cancellationToken);
        return server;
    }

    /// <summary>Starts the (stopped) server and waits until it accepts connections.</summary>
    public Task StartAgainAsync(CancellationToken cancellationToken) =>
        RunAsync("pg_ctl", ["-D", _data, "-l", Path.Combine(_data, "server.log"), "-w", "-t", "60", "start"], cancellationToken);

    /// <summary>Stops the server (fast: open sessions are ended) and waits until it is down.</summary>
    public Task StopAsync(CancellationToken cancellationToken) =>
        RunAsync("pg_ctl", ["-D", _data, "-m", "fast", "-w", "-t", "60", "stop"], cancellationToken);

    /// <summary>
    /// SIGSTOP to the postmaster and every process it started: the server stops answering, with every connection open,
    /// as on a stalled host. <see cref="Resume"/> undoes it.
    /// </summary>
    public void Pause()
    {
        var postmaster = int.Parse(File.ReadLines(Path.Combine(_data, "postmaster.pid")).First(), CultureInfo.InvariantCulture);
        // The postmaster first, and its children listed only once it has stopped: a backend it forked for a new connection
        // while they were listed kept serving through the pause (a start answered 201 during it, on a loaded machine).
        UnixSignal.Send(postmaster, UnixSignal.Stop);
        _paused = [postmaster];
        if (!SpinWait.SpinUntil(() => State(postmaster) is 'T' or null, StopDeadline))
        {
            throw new TimeoutException($"the postmaster ({postmaster}) did not stop within {StopDeadline.TotalSeconds:0} s of SIGSTOP");
        }

        foreach (var pid in ChildrenOf(postmaster))
        {
            UnixSignal.Send(pid, UnixSignal.Stop);
            _paused.Add(pid);
        }
    }

    public void Resume()
    {
        foreach (var pid in _paused)
        {
            UnixSignal.Send(pid, UnixSignal.Cont);
        }

        _paused = [];
    }

    public async ValueTask DisposeAsync()
    {
        Resume();
        try
        {
            await RunAsync("pg_ctl", ["-D", _data, "-m", "immediate", "-w", "-t", "30", "stop"], CancellationToken.None);
        }
        catch (InvalidOperationException)
        {
            // Already stopped.
        }

        Directory.Delete(_data, recursive: true);
    }

    private static bool IsRoot => Environment.UserName == "root";

    /// <summary>The newest PostgreSQL server binaries under /usr/lib/postgresql (Debian's layout), or null.</summary>
    internal static string? FindBin() => Directory.Exists("/usr/lib/postgresql")
        ? Directory.EnumerateDirectories("/usr/lib/postgresql")
            .Select(d => Path.Combine(d, "bin"))
            .Where(d => File.Exists(Path.Combine(d, "pg_ctl")))
            .OrderByDescending(d => int.TryParse(Path.GetFileName(Path.GetDirectoryName(d)), out var v) ? v : 0)
            .FirstOrDefault()
        : null;

    private static IEnumerable<int> ChildrenOf(int parent)
    {
        foreach (var directory in Directory.EnumerateDirectories("/proc"))
        {
            if (int.TryParse(Path.GetFileName(directory), CultureInfo.InvariantCulture, out var pid) && Stat(pid) is { } fields
                && int.Parse(fields[1], CultureInfo.InvariantCulture) == parent)
            {
                yield return pid;
            }
        }
    }

    /// <summary>A process's state letter (T: stopped), or null once it has ended.</summary>
    private static char? State(int pid) => Stat(pid)?[0][0];

    /// <summary>The fields of /proc/PID/stat after the command name (state, ppid, ...), or null once the process has ended.</summary>
    private static string[]? Stat(int pid)
    {
        string text;
        try
        {
            text = File.ReadAllText($"/proc/{pid}/stat");
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null; // the process ended meanwhile, or is not ours to read
        }

        // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
        return text[(text.LastIndexOf(')') + 2)..].Split(' ');
    }

    private async Task RunAsync(string tool, IReadOnlyList<string> arguments, CancellationToken cancellationToken)
    {
        var path = Path.Combine(_bin, tool);
        var start = IsRoot ? new ProcessStartInfo("/usr/sbin/runuser", ["-u", "postgres", "--", path, .. arguments]) : new ProcessStartInfo(path, arguments);
        start.WorkingDirectory = Path.GetTempPath();
        await SystemTool.RunAsync(start, $"{tool} {string.Join(' ', arguments)}", CommandDeadline, cancellationToken);
    }
}
