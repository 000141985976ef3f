using System.Data.Common;
using Microsoft.EntityFrameworkCore;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// The workflow store on any relational database EF Core supports; the SQL that differs comes from the dialect. One
/// instance serves every facet of the store contract, each in a file of its own (RelationalWorkflowStore.*.cs); this
/// part holds what they share: the group-commit writer and the ways of reading.
/// </summary>
public sealed partial class RelationalWorkflowStore(
    IDbContextFactory<WorkflowDbContext> contexts,
    SqlDialect dialect,
    Migrations.SchemaMigrator migrator,
    TimeProvider time)
    : IAsyncDisposable
{
    // Wait-point commits and signal inserts go through group commit (and, where the database takes one writer at a time,
    // claims as well).
    private readonly GroupCommitWriter _writer = new(contexts, dialect,
        dialect.SingleWriter ? GroupCommitOptions.SingleWriter : GroupCommitOptions.Server);

    public ValueTask DisposeAsync() => _writer.DisposeAsync();

    /// <summary>
    /// Runs a unit of work under the provider's execution strategy: on PostgreSQL a bounded retry of transient failures
    /// (a dropped connection). Every attempt gets the same context, emptied, and opens its own transaction.
    /// </summary>
    private async Task<T> RetryTransientAsync<T>(Func<WorkflowDbContext, CancellationToken, Task<T>> work, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.Database.CreateExecutionStrategy().ExecuteAsync((db, work), static (state, ct) =>
        {
            // A failed attempt may have left entities tracked: start each one clean.
            state.db.ChangeTracker.Clear();
            return state.work(state.db, ct);
        }, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>How many times a read is repeated after a transient failure.</summary>
    private const int TransientReadRetries = 2;

    /// <summary>Runs a hand-written query and reads its first row, if any.</summary>
    private Task<T?> QuerySingleAsync<T>(SqlStatement statement, Func<DbDataReader, T> read, CancellationToken cancellationToken)
        where T : class =>
        ReadAsync(statement, async (reader, ct) => await reader.ReadAsync(ct).ConfigureAwait(false) ? read(reader) : null, cancellationToken);

    /// <summary>
    /// Runs a hand-written query: on a connection straight from the provider's data source where there is one
    /// (PostgreSQL), else on a pooled context's connection.
    /// </summary>
    private async Task<T> ReadAsync<T>(SqlStatement statement, Func<DbDataReader, CancellationToken, Task<T>> read, CancellationToken cancellationToken)
    {
        if (dialect.DataSource is { } source)
        {
            return await ReadOnAsync(source, statement, read, cancellationToken).ConfigureAwait(false);
        }

        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        await db.Database.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            await using var command = db.Database.GetDbConnection().CreateCommand();
            statement.ApplyTo(command);
            await using var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
            return await read(reader, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            await db.Database.CloseConnectionAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Runs a statement that returns rows on a connection straight from <paramref name="source"/>, repeated after a
    /// transient failure (a pooled connection the server dropped in a restart or a failover fails once, then the pool
    /// hands out a new one): for reads, and for claims, whose lost answer only delays their signals until the lease ends.
    /// </summary>
    private async Task<T> ReadOnAsync<T>(DbDataSource source, SqlStatement statement, Func<DbDataReader, CancellationToken, Task<T>> read,
        CancellationToken cancellationToken)
    {
        for (var attempt = 0; ; attempt++)
        {
            try
            {
                await using var command = source.CreateCommand();
                statement.ApplyTo(command);
                await using var reader = await command.ExecuteReaderAsync(cancellationToken).ConfigureAwait(false);
                return await read(reader, cancellationToken).ConfigureAwait(false);
            }
            catch (DbException e) when (attempt < TransientReadRetries && dialect.IsTransient(e))
            {
            }
        }
    }
}
