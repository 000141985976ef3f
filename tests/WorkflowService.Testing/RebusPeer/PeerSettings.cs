using System.Globalization;

namespace WorkflowService.Testing.RebusPeer;

/// <summary>
/// The peer's settings: each from the command line (--name value) or else the environment (REBUS_PEER_NAME, dashes as
/// underscores), or its default. The runner passes them on the command line; the environment serves a hand-started peer.
/// </summary>
public sealed record PeerSettings
{
    /// <summary>The line a started peer prints once its bus receives, which the runner waits for.</summary>
    public const string ReadyLine = "rebus-peer ready";

    public required string ConnectionString { get; init; }

    /// <summary>The PostgreSQL transport's one table of messages; every queue is a recipient column value in it.</summary>
    public string TransportTable { get; init; } = "rebus_messages";

    /// <summary>The saga's input queue, to which the client sends its starts and signals.</summary>
    public string Queue { get; init; } = "rebus-roundtrip-saga";

    public string SagaTable { get; init; } = "rebus_saga_data";
    public string SagaIndexTable { get; init; } = "rebus_saga_index";

    /// <summary>Rebus's worker threads, which start receives (Options.DefaultNumberOfWorkers: 1).</summary>
    public int Workers { get; init; } = 1;

    /// <summary>Receives and handlers in flight at once over all workers (Options.DefaultMaxParallelism: 5).</summary>
    public int Parallelism { get; init; } = 5;

    /// <summary>
    /// The waits after a receive that found nothing, one per second of idleness, the last repeating (SetBackoffTimes);
    /// empty for Rebus's own.
    /// </summary>
    public IReadOnlyList<TimeSpan> Backoff { get; init; } = [];

    public static PeerSettings Parse(IReadOnlyList<string> args)
    {
        var given = new Dictionary<string, string>(StringComparer.Ordinal);
        for (var i = 0; i < args.Count; i++)
        {
            if (!args[i].StartsWith("--", StringComparison.Ordinal) || i + 1 == args.Count)
            {
                throw new ArgumentException($"expected --name value, got '{args[i]}'");
            }

            given[args[i][2..]] = args[++i];
        }

        string? Value(string name) => given.GetValueOrDefault(name)
            ?? Environment.GetEnvironmentVariable("REBUS_PEER_" + name.Replace('-', '_').ToUpperInvariant());
        int Number(string name, int fallback) => Value(name) is { } text ? int.Parse(text, CultureInfo.InvariantCulture) : fallback;

        var defaults = new PeerSettings { ConnectionString = string.Empty };
        return new PeerSettings
        {
            ConnectionString = Value("connection") ?? throw new ArgumentException("--connection (or REBUS_PEER_CONNECTION) is required"),
            TransportTable = Value("transport-table") ?? defaults.TransportTable,
            Queue = Value("queue") ?? defaults.Queue,
            SagaTable = Value("saga-table") ?? defaults.SagaTable,
            SagaIndexTable = Value("saga-index-table") ?? defaults.SagaIndexTable,
            Workers = Number("workers", defaults.Workers),
            Parallelism = Number("parallelism", defaults.Parallelism),
            Backoff = ParseBackoff(Value("backoff-ms")),
        };
    }

    /// <summary>"1,10,100" (milliseconds) → the backoff waits; null or empty → none (Rebus's own).</summary>
    public static IReadOnlyList<TimeSpan> ParseBackoff(string? milliseconds) =>
        string.IsNullOrWhiteSpace(milliseconds)
            ? []
            : milliseconds.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
                .Select(ms => TimeSpan.FromMilliseconds(double.Parse(ms, CultureInfo.InvariantCulture))).ToList();

    /// <summary>The backoff as the command line takes it, or "default".</summary>
    public static string Describe(IReadOnlyList<TimeSpan> backoff) =>
        backoff.Count == 0 ? "default" : string.Join(',', backoff.Select(b => b.TotalMilliseconds.ToString(CultureInfo.InvariantCulture)));

    public override string ToString() => string.Create(CultureInfo.InvariantCulture,
        $"queue {Queue} on table {TransportTable}, sagas in {SagaTable}/{SagaIndexTable}, workers {Workers}, parallelism {Parallelism}, backoff ms {Describe(Backoff)}");
}
