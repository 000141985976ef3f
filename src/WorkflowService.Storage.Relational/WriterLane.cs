using Microsoft.EntityFrameworkCore;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// One group-commit writer's long-lived context, whose connection stays open: no connection open or pragma per write, and
/// (where the writer keeps them, SQLite) each statement prepared once. Used by one writer loop at a time; the context
/// still runs EF Core's interceptors (transactions).
/// </summary>
internal sealed class WriterLane(IDbContextFactory<WorkflowDbContext> contexts) : IAsyncDisposable
{
    private WorkflowDbContext? _db;
    private SqlCommandCache? _commands;

    public async ValueTask<(WorkflowDbContext Db, SqlCommandCache Commands)> EnterAsync(CancellationToken cancellationToken)
    {
        if (_db is null || _commands is null)
        {
            var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
            try
            {
                await db.Database.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
            }
            catch
            {
                await db.DisposeAsync().ConfigureAwait(false);
                throw;
            }

            _db = db;
            _commands = new SqlCommandCache();
        }

        _db.ChangeTracker.Clear();
        return (_db, _commands);
    }

    /// <summary>Drops the connection after an unexpected failure; the next write opens a new one.</summary>
    public async ValueTask ResetAsync()
    {
        _commands?.Dispose();
        _commands = null;
        if (_db is not null)
        {
            await _db.DisposeAsync().ConfigureAwait(false);
            _db = null;
        }
    }

    public ValueTask DisposeAsync() => ResetAsync();
}
