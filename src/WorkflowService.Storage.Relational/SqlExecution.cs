using System.Data.Common;

namespace WorkflowService.Storage.Relational;

/// <summary>Runs hand-written statements in order, in one round trip where the provider batches (PostgreSQL).</summary>
internal static class SqlExecution
{
    /// <summary>The rows each statement affected.</summary>
    public static async Task<int[]> ExecuteAsync(DbConnection connection, DbTransaction? transaction, IReadOnlyList<SqlStatement> statements,
        SqlCommandCache? cache, CancellationToken cancellationToken)
    {
        var affected = new int[statements.Count];
        if (cache is null && statements.Count > 1 && connection.CanCreateBatch)
        {
            await using var batch = connection.CreateBatch();
            batch.Transaction = transaction;
            foreach (var statement in statements)
            {
                var command = batch.CreateBatchCommand();
                statement.ApplyTo(command);
                batch.BatchCommands.Add(command);
            }

            await batch.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
            for (var i = 0; i < affected.Length; i++)
            {
                affected[i] = batch.BatchCommands[i].RecordsAffected;
            }

            return affected;
        }

        // One statement at a time: on a connection that keeps its commands prepared (SQLite's writer), or where the
        // provider does not batch.
        for (var i = 0; i < statements.Count; i++)
        {
            var command = SqlCommandCache.RentOrCreate(cache, connection, transaction, statements[i], out var owned);
            try
            {
                affected[i] = await command.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
            }
            finally
            {
                if (owned)
                {
                    await command.DisposeAsync().ConfigureAwait(false);
                }
            }
        }

        return affected;
    }
}
