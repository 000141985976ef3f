using System.Data.Common;
using Npgsql;

namespace WorkflowService.Storage.Relational.PostgreSql;

/// <summary>The PostgreSQL store's settings (the "Store" section).</summary>
public sealed class PostgreSqlStoreOptions : RelationalStoreOptions
{
    /// <summary>
    /// Optional: a read-only server (a standby, or CloudNativePG's -ro service) for operators' lists, counts, search and
    /// the console, which may then lag the primary by the replication delay. Empty (the default): every read on the store.
    /// </summary>
    public string ReadConnectionString { get; set; } = string.Empty;

    protected override DbConnectionStringBuilder CreateConnectionStringBuilder() => new NpgsqlConnectionStringBuilder();

    protected override IEnumerable<string> BackendProblems(string section)
    {
        if (!string.IsNullOrWhiteSpace(ReadConnectionString) && ConnectionStringProblem(ReadConnectionString) is { } unreadable)
        {
            yield return $"{section}:ReadConnectionString cannot be read by the PostgreSQL driver: {unreadable}";
        }

        if (WritesMayLandOnStandby(ConnectionString))
        {
            yield return $"{section}:ConnectionString names several hosts but not which one takes writes; add \"Target Session Attributes=primary\" (or read-write).";
        }
    }

    /// <summary>
    /// Whether <paramref name="connectionString"/> lists several hosts and lets Npgsql pick any of them: the store and its
    /// LISTEN connection would then land on a standby whenever it is listed first.
    /// </summary>
    internal static bool WritesMayLandOnStandby(string connectionString)
    {
        NpgsqlConnectionStringBuilder builder;
        try
        {
            builder = new NpgsqlConnectionStringBuilder(connectionString);
        }
        catch (ArgumentException)
        {
            return false; // reported as unreadable already
        }

        return builder.Host?.Contains(',', StringComparison.Ordinal) == true
               && builder.TargetSessionAttributes?.Trim().ToUpperInvariant() is not ("PRIMARY" or "READ-WRITE");
    }
}
