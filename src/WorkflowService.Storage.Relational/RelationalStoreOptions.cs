using System.Data.Common;
using System.Text.RegularExpressions;

namespace WorkflowService.Storage.Relational;

/// <summary>What every relational store is configured with (the "Store" section).</summary>
public abstract partial class RelationalStoreOptions
{
    /// <summary>The backend's connection string.</summary>
    public string ConnectionString { get; set; } = string.Empty;

    /// <summary>Longest a single database command may run, in seconds (default 30).</summary>
    public int CommandTimeoutSeconds { get; set; } = 30;

    /// <summary>
    /// Largest connection pool of a server database (default 20: enough for 8 workers, the API and the listener); checked
    /// on every store, so that a setting meant for a server is not wrong unnoticed.
    /// </summary>
    public int MaxPoolSize { get; set; } = 20;

    /// <summary>
    /// Whether a node applies pending schema steps itself at start-up (default true). Set it to false where the application
    /// may not change the schema: an operator then runs <c>WorkflowService migrate</c> first, and a node refuses to start
    /// while steps are pending.
    /// </summary>
    public bool ApplyMigrationsAtStartup { get; set; } = true;

    /// <summary>
    /// How long a migration may take: the wait for another node's migration to end, and the longest one statement of a
    /// step may run (default 10 minutes).
    /// </summary>
    public TimeSpan MigrationTimeout { get; set; } = TimeSpan.FromMinutes(10);

    /// <summary>The driver's parser of <see cref="ConnectionString"/>, which refuses unknown keywords and malformed text.</summary>
    protected abstract DbConnectionStringBuilder CreateConnectionStringBuilder();

    /// <summary>The wrong settings, each naming its key under <paramref name="section"/> and what it may be.</summary>
    internal IEnumerable<string> Problems(string section, string store)
    {
        if (string.IsNullOrWhiteSpace(ConnectionString))
        {
            yield return $"{section}:ConnectionString is empty; set it for the {store} store.";
        }
        else if (ConnectionStringProblem(ConnectionString) is { } problem)
        {
            yield return $"{section}:ConnectionString cannot be read by the {store} driver: {problem}";
        }

        if (CommandTimeoutSeconds is < 1 or > 3600)
        {
            yield return $"{section}:CommandTimeoutSeconds must be between 1 and 3600 (it is {CommandTimeoutSeconds}).";
        }

        if (MigrationTimeout < TimeSpan.FromSeconds(1) || MigrationTimeout > TimeSpan.FromDays(1))
        {
            yield return $"{section}:MigrationTimeout must be between 00:00:01 and 1.00:00:00 (it is {MigrationTimeout}).";
        }

        if (MaxPoolSize is < 2 or > 1000)
        {
            yield return $"{section}:MaxPoolSize must be between 2 and 1000 (it is {MaxPoolSize}).";
        }

        foreach (var problem in BackendProblems(section))
        {
            yield return problem;
        }
    }

    /// <summary>What only this backend checks, each naming its key under <paramref name="section"/>; nothing by default.</summary>
    protected virtual IEnumerable<string> BackendProblems(string section) => [];

    /// <summary>
    /// Why the driver refuses <paramref name="connectionString"/> (an unknown keyword, a value of the wrong kind, malformed
    /// text), or null. The driver's reason names the keyword; it is left out when it would repeat the password.
    /// </summary>
    protected string? ConnectionStringProblem(string connectionString)
    {
        try
        {
            CreateConnectionStringBuilder().ConnectionString = connectionString;
            return null;
        }
        catch (Exception e) when (e is ArgumentException or FormatException or InvalidOperationException or KeyNotFoundException)
        {
            var password = PasswordValue().Match(connectionString);
            return password.Success && password.Groups["value"].Value.Trim() is { Length: > 0 } secret && e.Message.Contains(secret, StringComparison.Ordinal)
                ? "a value is not valid (not repeated here: it may be secret)."
                : e.Message.ReplaceLineEndings(" ");
        }
    }

    [GeneratedRegex(@"(?:password|pwd)\s*=\s*(?<value>[^;]*)", RegexOptions.IgnoreCase | RegexOptions.CultureInvariant)]
    private static partial Regex PasswordValue();
}
