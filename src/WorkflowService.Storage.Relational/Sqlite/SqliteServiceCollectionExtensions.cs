using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.Diagnostics;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Configuration;

namespace WorkflowService.Storage.Relational.Sqlite;

public static class SqliteServiceCollectionExtensions
{
    /// <summary>
    /// The embedded SQLite store, configured by <paramref name="section"/> (ConnectionString, SqliteSynchronous,
    /// CommandTimeoutSeconds), checked at start-up. Its wake-ups stay in process: register the in-process transport.
    /// </summary>
    public static IServiceCollection AddSqliteWorkflowStore(this IServiceCollection services, IConfigurationSection section)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(section);
        services.AddStoreOptions<SqliteStoreOptions>(section, "Sqlite")
            .Configure(o => o.Synchronous = ConfigurationChoice.Read(section, SqliteStoreOptions.SynchronousKey, o.Synchronous));
        services.AddPooledDbContextFactory<WorkflowDbContext>((provider, o) =>
        {
            var store = provider.GetRequiredService<IOptions<SqliteStoreOptions>>().Value;
            o.UseSqlite(store.ConnectionString, sqlite => sqlite.CommandTimeout(store.CommandTimeoutSeconds))
                .AddInterceptors(new SqlitePragmaInterceptor(store.Synchronous.ToString().ToUpperInvariant()))
                .AddInterceptors(provider.GetServices<IInterceptor>())
                .ConfigureWarnings(RelationalStoreServices.QuietExpectedFailures);
        });
        return services.AddRelationalStore<SqliteDialect, SqliteStoreOptions>(p => p.GetRequiredService<IOptions<SqliteStoreOptions>>().Value.ConnectionString);
    }
}
