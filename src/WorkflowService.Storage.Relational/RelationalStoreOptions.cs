namespace WorkflowService.Storage.Relational;

/// <summary>What every relational store is configured with (the "Store" section).</summary>
public abstract class RelationalStoreOptions
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

    /// <summary>The wrong settings, each naming its key under <paramref name="section"/> and what it may be.</summary>
    internal IEnumerable<string> Problems(string section, string store)
    {
        if (string.IsNullOrWhiteSpace(ConnectionString))
        {
            yield return $"{section}:ConnectionString is empty; set it for the {store} store.";
        }

        if (CommandTimeoutSeconds is < 1 or > 3600)
        {
            yield return $"{section}:CommandTimeoutSeconds must be between 1 and 3600 (it is {CommandTimeoutSeconds}).";
        }

        if (MaxPoolSize is < 2 or > 1000)
        {
            yield return $"{section}:MaxPoolSize must be between 2 and 1000 (it is {MaxPoolSize}).";
        }
    }
}
