using System.Text.RegularExpressions;
using MongoDB.Driver;

namespace WorkflowService.Storage.MongoDb;

/// <summary>
/// The MongoDB store's settings (the "Store" section with Store:Provider MongoDb). Every wait the store makes is bounded
/// by one of them; each default says why it is what it is.
/// </summary>
public sealed partial class MongoStoreOptions
{
    /// <summary>
    /// A MongoDB connection string naming a replica set (or a sharded cluster): transactions and change streams need one,
    /// for example "mongodb://mongo1,mongo2,mongo3/?replicaSet=rs0".
    /// </summary>
    public string ConnectionString { get; set; } = string.Empty;

    /// <summary>The database the store's collections live in (default "workflow"; the connection string's database is not used).</summary>
    public string Database { get; set; } = "workflow";

    /// <summary>
    /// Largest connection pool per server (default 20, as the relational stores: enough for 8 workers, the API and the
    /// change stream).
    /// </summary>
    public int MaxPoolSize { get; set; } = 20;

    /// <summary>
    /// How long an operation waits for a suitable server (default 10 s: a replica set elects a new primary in about 10 s;
    /// the driver's own default of 30 s holds requests longer than callers wait).
    /// </summary>
    public TimeSpan ServerSelectionTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>How long opening one connection may take (default 10 s, the driver's default is 30 s).</summary>
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Longest a single read or write may wait for the server's answer on its socket (default 30 s, as the relational
    /// stores' command timeout). The change stream's wait is shorter (<see cref="ChangeStreamMaxAwait"/>), so it never
    /// meets this limit.
    /// </summary>
    public TimeSpan SocketTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// How long a transaction's commit may wait for a majority of the replica set (default 10 s: the commit's
    /// maxCommitTimeMS; past it the commit is retried, then reported as a failure of the store).
    /// </summary>
    public TimeSpan TransactionCommitTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// How many times a transaction is run again after a transient failure (the server's TransientTransactionError or
    /// UnknownTransactionCommitResult label: a write conflict, a primary stepping down). Default 3. The driver's own
    /// WithTransactionAsync retries for up to 120 s, longer than any caller waits, so the store runs its own bounded loop.
    /// </summary>
    public int TransactionRetries { get; set; } = 3;

    /// <summary>
    /// Most wait points committed in one transaction by group commit (default 32, as the PostgreSQL store; 1 commits each
    /// wait point alone). Under load the wait points queued meanwhile share one transaction's round trips and its one
    /// majority-acknowledged commit; a group that would not go in whole is committed one by one.
    /// </summary>
    public int GroupCommitMaxBatch { get; set; } = 32;

    /// <summary>
    /// Group commit's writer loops, each committing one group at a time (default 4, as the PostgreSQL store: enough to keep
    /// a replica set's primary busy while each group waits for its majority).
    /// </summary>
    public int GroupCommitWriters { get; set; } = 4;

    /// <summary>
    /// Whether a node creates the collections and indexes and writes the schema document itself at start-up (default
    /// true). Set it to false where the application may not change the database: an operator then runs
    /// <c>WorkflowService migrate</c> first, and a node refuses to start while steps are pending.
    /// </summary>
    public bool ApplyMigrationsAtStartup { get; set; } = true;

    /// <summary>How long a node waits for another node's migration (the schema lease) to end (default 10 minutes, as the relational stores).</summary>
    public TimeSpan MigrationTimeout { get; set; } = TimeSpan.FromMinutes(10);

    /// <summary>
    /// How long the change stream's server waits for a new event before it answers an empty batch (the getMore's
    /// maxAwaitTimeMS; default 5 s). A quiet stream still proves the connection alive at this pace.
    /// </summary>
    public TimeSpan ChangeStreamMaxAwait { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Failed reconnects of the change stream in a row before it gives up and the node reports itself unhealthy
    /// (default 1000: about eight hours at the 30 s cap, as the broadcast wake-ups).
    /// </summary>
    public int ChangeStreamMaxReconnects { get; set; } = 1000;

    /// <summary>The longest pause between two reconnects of the change stream (default 30 s; the pause starts at 200 ms and doubles, jittered).</summary>
    public TimeSpan ChangeStreamMaxBackoff { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>The wrong settings, each naming its key under <paramref name="section"/> and what it may be.</summary>
    internal IEnumerable<string> Problems(string section)
    {
        if (string.IsNullOrWhiteSpace(ConnectionString))
        {
            yield return $"{section}:ConnectionString is empty; set it for the MongoDb store (a replica set, for example \"mongodb://mongo:27017/?replicaSet=rs0\").";
        }
        else if (ConnectionStringProblem() is { } problem)
        {
            yield return $"{section}:ConnectionString cannot be read by the MongoDB driver: {problem}";
        }

        if (string.IsNullOrWhiteSpace(Database) || !DatabaseName().IsMatch(Database))
        {
            yield return $"{section}:Database must be 1 to 63 characters without spaces, '.', '$', '/', '\\' or '\"' (it is '{Database}').";
        }

        if (MaxPoolSize is < 2 or > 1000)
        {
            yield return $"{section}:MaxPoolSize must be between 2 and 1000 (it is {MaxPoolSize}).";
        }

        foreach (var (key, value, min, max) in new[]
                 {
                     (nameof(ServerSelectionTimeout), ServerSelectionTimeout, TimeSpan.FromMilliseconds(100), TimeSpan.FromMinutes(5)),
                     (nameof(ConnectTimeout), ConnectTimeout, TimeSpan.FromMilliseconds(100), TimeSpan.FromMinutes(5)),
                     (nameof(SocketTimeout), SocketTimeout, TimeSpan.FromSeconds(1), TimeSpan.FromHours(1)),
                     (nameof(TransactionCommitTimeout), TransactionCommitTimeout, TimeSpan.FromMilliseconds(100), TimeSpan.FromMinutes(5)),
                     (nameof(MigrationTimeout), MigrationTimeout, TimeSpan.FromSeconds(1), TimeSpan.FromDays(1)),
                     (nameof(ChangeStreamMaxAwait), ChangeStreamMaxAwait, TimeSpan.FromMilliseconds(100), TimeSpan.FromMinutes(1)),
                     (nameof(ChangeStreamMaxBackoff), ChangeStreamMaxBackoff, TimeSpan.FromMilliseconds(200), TimeSpan.FromMinutes(10)),
                 })
        {
            if (value < min || value > max)
            {
                yield return $"{section}:{key} must be between {min} and {max} (it is {value}).";
            }
        }

        if (ChangeStreamMaxAwait >= SocketTimeout)
        {
            yield return $"{section}:ChangeStreamMaxAwait ({ChangeStreamMaxAwait}) must be shorter than {section}:SocketTimeout ({SocketTimeout}): the stream's wait would time its socket out.";
        }

        if (TransactionRetries is < 0 or > 20)
        {
            yield return $"{section}:TransactionRetries must be between 0 and 20 (it is {TransactionRetries}).";
        }

        if (GroupCommitMaxBatch is < 1 or > 1000)
        {
            yield return $"{section}:GroupCommitMaxBatch must be between 1 and 1000 (it is {GroupCommitMaxBatch}).";
        }

        if (GroupCommitWriters is < 1 or > 64)
        {
            yield return $"{section}:GroupCommitWriters must be between 1 and 64 (it is {GroupCommitWriters}).";
        }
        else if (GroupCommitWriters >= MaxPoolSize)
        {
            yield return $"{section}:GroupCommitWriters ({GroupCommitWriters}) must be fewer than {section}:MaxPoolSize ({MaxPoolSize}): the claims, the API and the change stream need connections too.";
        }

        if (ChangeStreamMaxReconnects is < 1 or > 100_000)
        {
            yield return $"{section}:ChangeStreamMaxReconnects must be between 1 and 100000 (it is {ChangeStreamMaxReconnects}).";
        }
    }

    /// <summary>
    /// Why the driver refuses the connection string, or null. The driver's reason is left out when it would repeat the
    /// password (mongodb://user:password@host).
    /// </summary>
    private string? ConnectionStringProblem()
    {
        try
        {
            // Parsed only: an SRV name is not looked up here (the driver resolves it when it connects).
            _ = new MongoUrl(ConnectionString);
            return null;
        }
        catch (Exception e) when (e is MongoConfigurationException or ArgumentException or FormatException)
        {
            var password = Password().Match(ConnectionString);
            return password.Success && password.Groups["value"].Value is { Length: > 0 } secret && e.Message.Contains(secret, StringComparison.Ordinal)
                ? "a value is not valid (not repeated here: it may be secret)."
                : e.Message.ReplaceLineEndings(" ");
        }
    }

    // The user-info's password of any URL-like string (mongodb://, mongodb+srv://, or a scheme the driver refuses).
    [GeneratedRegex(@"://[^:/@]*:(?<value>[^@/]*)@", RegexOptions.CultureInvariant)]
    private static partial Regex Password();

    [GeneratedRegex(@"^[^\s./\\""$]{1,63}$", RegexOptions.CultureInvariant)]
    private static partial Regex DatabaseName();
}
