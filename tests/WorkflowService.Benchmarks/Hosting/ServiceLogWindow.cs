using System.Text;

namespace WorkflowService.Benchmarks.Hosting;

/// <summary>
/// The database commands a service process logged between two positions of its log file, when it runs with EF Core's
/// command and connection logging on (<see cref="Environment"/>): every store query goes through EF Core, which logs each
/// executed command ("Executed DbCommand", the SQL on the following lines) and each connection it opens ("Opened
/// connection"). Commands sent beside EF Core (PostgreSQL's LISTEN/NOTIFY connection, the SQLite store's per-open
/// PRAGMA command) are not in it.
/// </summary>
internal sealed record ServiceLogWindow(int Commands, int ConnectionOpens, IReadOnlyDictionary<string, int> ByStatement)
{
    private const string CommandMarker = "Executed DbCommand";
    private const string FailedMarker = "Failed executing DbCommand";
    private const string OpenMarker = "Opened connection to database";

    /// <summary>The service's log levels for it: EF Core's commands and connection opens (Debug).</summary>
    public static IReadOnlyDictionary<string, string> Environment { get; } = new Dictionary<string, string>
    {
        // Debug: failed commands too (the service logs its expected failures at Debug).
        ["Serilog__MinimumLevel__Override__Microsoft.EntityFrameworkCore.Database.Command"] = "Debug",
        ["Serilog__MinimumLevel__Override__Microsoft.EntityFrameworkCore.Database.Connection"] = "Debug",
    };

    /// <summary>The log's length now: a position to count from or to.</summary>
    public static long Position(string logPath) => new FileInfo(logPath).Length;

    /// <summary>Counts what the log holds between two positions (a command whose SQL lies past the end counts, unlabelled).</summary>
    public static ServiceLogWindow Read(string logPath, long from, long to)
    {
        string text;
        using (var stream = new FileStream(logPath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite))
        {
            stream.Seek(from, SeekOrigin.Begin);
            var buffer = new byte[Math.Max(0, to - from)];
            stream.ReadExactly(buffer);
            text = Encoding.UTF8.GetString(buffer);
        }

        var lines = text.Split('\n');
        var commands = 0;
        var opens = 0;
        var byStatement = new SortedDictionary<string, int>(StringComparer.Ordinal);
        for (var i = 0; i < lines.Length; i++)
        {
            if (lines[i].Contains(OpenMarker, StringComparison.Ordinal))
            {
                opens++;
            }
            else if (lines[i].Contains(CommandMarker, StringComparison.Ordinal) || lines[i].Contains(FailedMarker, StringComparison.Ordinal))
            {
                commands++;
                // EF Core writes the SQL after the message's first line: its first line names the statement.
                var statement = i + 1 < lines.Length && lines[i + 1].Trim() is { Length: > 0 } sql && !sql.StartsWith('[')
                    ? Label(sql)
                    : "(SQL not in the window)";
                byStatement[statement] = byStatement.GetValueOrDefault(statement) + 1;
            }
        }

        return new ServiceLogWindow(commands, opens, byStatement);
    }

    /// <summary>A statement's first line, shortened; parameter values are never logged (no sensitive-data logging).</summary>
    private static string Label(string firstLine) => firstLine.Length <= 70 ? firstLine : firstLine[..70] + " …";
}
