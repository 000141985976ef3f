using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.Diagnostics;
using Microsoft.EntityFrameworkCore.Infrastructure;
using Npgsql;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational.PostgreSql;

/// <summary>
/// The read-only server of Store:ReadConnectionString (a standby): its own pool, and the operators' queries that may be
/// stale (<see cref="OperatorReads"/>) served on it. Nothing else reads there, and nothing writes.
/// </summary>
internal sealed class PostgresReadServer : IAsyncDisposable
{
    /// <summary>The application name of its connections unless the string sets one: what pg_stat_activity shows on the standby.</summary>
    public const string ApplicationName = "workflow-reads";

    public PostgresReadServer(NpgsqlConnectionStringBuilder connection, IEnumerable<IInterceptor> interceptors, IOperatorQueries primary)
    {
        ArgumentNullException.ThrowIfNull(connection);
        if (string.IsNullOrEmpty(connection.ApplicationName))
        {
            connection.ApplicationName = ApplicationName;
        }

        Source = new NpgsqlDataSourceBuilder(connection.ConnectionString).Build();
        var options = new DbContextOptionsBuilder<WorkflowDbContext>()
            .UseNpgsql(Source, npgsql => npgsql.EnableRetryOnFailure(maxRetryCount: 3, maxRetryDelay: TimeSpan.FromSeconds(2), errorCodesToAdd: null))
            .AddInterceptors(interceptors)
            .ConfigureWarnings(RelationalStoreServices.QuietExpectedFailures)
            .Options;
        // Searches stay on the primary, whose store knows the tenant's attribute slots (docs/high-availability.md).
        Queries = new RelationalOperatorQueries(new PooledDbContextFactory<WorkflowDbContext>(options), primary);
    }

    public NpgsqlDataSource Source { get; }

    public IOperatorQueries Queries { get; }

    public ValueTask DisposeAsync() => Source.DisposeAsync();
}
