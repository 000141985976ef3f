using System.Diagnostics;
using System.Globalization;

namespace WorkflowService.Testing.Processes;

/// <summary>
/// Reads CPU time, memory high-water marks and storage writes from Linux's /proc: /proc/&lt;pid&gt;/stat (utime + stime),
/// /proc/&lt;pid&gt;/status (VmHWM, VmRSS), /proc/&lt;pid&gt;/io (write_bytes: bytes this process caused to be written to
/// storage) and /proc/stat (the whole machine's busy time). Every value is 0 where the file cannot be read.
/// </summary>
internal static class ResourceProbe
{
    // USER_HZ: the unit of the CPU fields of /proc; 100 on every Linux architecture .NET runs on.
    private const double TicksPerSecond = 100.0;

    public static ResourceSnapshot Read(int? servicePid)
    {
        var self = Process.GetCurrentProcess();
        self.Refresh();
        return new ResourceSnapshot(
            servicePid is { } pid ? ProcessCpuSeconds(pid) : 0,
            servicePid is { } p1 ? StatusKilobytes(p1, "VmHWM:") * 1024 : 0,
            servicePid is { } p2 ? StatusKilobytes(p2, "VmRSS:") * 1024 : 0,
            servicePid is { } p3 ? IoField(p3, "write_bytes:") : 0,
            self.TotalProcessorTime.TotalSeconds,
            PostgresServerCpuSeconds(),
            MachineBusyCpuSeconds());
    }

    /// <summary>Resets the process's peak resident set (VmHWM) to its current size: "echo 5 &gt; /proc/PID/clear_refs".</summary>
    public static bool ResetPeak(int pid)
    {
        try
        {
            File.WriteAllText($"/proc/{pid}/clear_refs", "5");
            return true;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }

    public static double ProcessCpuSeconds(int pid)
    {
        var fields = StatFields(pid);
        return fields is null ? 0 : (long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture)) / TicksPerSecond;
    }

    /// <summary>All PostgreSQL server processes on this machine (postmaster, backends, WAL writer, checkpointer, ...).</summary>
    public static double PostgresServerCpuSeconds()
    {
        double total = 0;
        foreach (var dir in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), out var pid))
            {
                continue;
            }

            var comm = Read($"/proc/{pid}/comm")?.Trim();
            if (comm == "postgres")
            {
                total += ProcessCpuSeconds(pid);
            }
        }

        return total;
    }

    public static double MachineBusyCpuSeconds()
    {
        var line = Read("/proc/stat")?.Split('\n').FirstOrDefault(l => l.StartsWith("cpu ", StringComparison.Ordinal));
        if (line is null)
        {
            return 0;
        }

        // cpu user nice system idle iowait irq softirq steal ...: busy = everything but idle and iowait.
        var v = line.Split(' ', StringSplitOptions.RemoveEmptyEntries).Skip(1).Select(x => long.Parse(x, CultureInfo.InvariantCulture)).ToArray();
        var busy = v[0] + v[1] + v[2] + v[5] + v[6] + (v.Length > 7 ? v[7] : 0);
        return busy / TicksPerSecond;
    }

    public static long StatusKilobytes(int pid, string field)
    {
        var line = Read($"/proc/{pid}/status")?.Split('\n').FirstOrDefault(l => l.StartsWith(field, StringComparison.Ordinal));
        return line is null ? 0 : long.Parse(line[field.Length..].Trim().Split(' ')[0], CultureInfo.InvariantCulture);
    }

    private static long IoField(int pid, string field)
    {
        var line = Read($"/proc/{pid}/io")?.Split('\n').FirstOrDefault(l => l.StartsWith(field, StringComparison.Ordinal));
        return line is null ? 0 : long.Parse(line[field.Length..].Trim(), CultureInfo.InvariantCulture);
    }

    private static string[]? StatFields(int pid)
    {
        // The command name (field 2) is in parentheses and may hold spaces: split after its closing parenthesis.
        var stat = Read($"/proc/{pid}/stat");
        if (stat is null)
        {
            return null;
        }

        var rest = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
        // rest[0] is field 3 (state); utime and stime are fields 14 and 15, i.e. rest[11] and rest[12].
        return rest;
    }

    private static string? Read(string path)
    {
        try
        {
            return File.ReadAllText(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
