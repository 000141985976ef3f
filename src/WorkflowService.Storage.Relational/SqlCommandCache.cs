using System.Data.Common;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// The commands of one long-lived connection, kept by their text so that each statement is prepared once (SQLite's
/// writer connection). Used by one writer at a time; bounded.
/// </summary>
internal sealed class SqlCommandCache : IDisposable
{
    private const int MaxCommands = 128;
    private readonly Dictionary<string, DbCommand> _commands = new(StringComparer.Ordinal);

    /// <summary>
    /// A command for the statement on this connection, with its values bound: from <paramref name="cache"/> where the
    /// connection keeps one, else a new one; <paramref name="owned"/> when the caller disposes it.
    /// </summary>
    public static DbCommand RentOrCreate(SqlCommandCache? cache, DbConnection connection, DbTransaction? transaction, SqlStatement statement,
        out bool owned)
    {
        if (cache is not null)
        {
            return cache.Rent(connection, transaction, statement, out owned);
        }

        var command = connection.CreateCommand();
        command.Transaction = transaction;
        statement.ApplyTo(command);
        owned = true;
        return command;
    }

    /// <summary>A command for the statement on this connection, with its values bound; <paramref name="owned"/> when the caller disposes it.</summary>
    public DbCommand Rent(DbConnection connection, DbTransaction? transaction, SqlStatement statement, out bool owned)
    {
        var text = statement.Text;
        if (_commands.TryGetValue(text, out var command) && command.Parameters.Count == statement.Parameters.Count)
        {
            command.Transaction = transaction;
            for (var i = 0; i < statement.Parameters.Count; i++)
            {
                TypedNull.Bind(command.Parameters[i], statement.Parameters[i]);
            }

            owned = false;
            return command;
        }

        command = connection.CreateCommand();
        command.Transaction = transaction;
        statement.ApplyTo(command);
        owned = _commands.Count >= MaxCommands || !_commands.TryAdd(text, command);
        return command;
    }

    public void Dispose()
    {
        foreach (var command in _commands.Values)
        {
            command.Dispose();
        }

        _commands.Clear();
    }
}
