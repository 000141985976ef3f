using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.Diagnostics;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using OpenTelemetry.Metrics;
using WorkflowService.Engine;
using WorkflowService.Engine.Configuration;
using WorkflowService.Engine.Persistence;
using WorkflowService.Storage.Relational.Migrations;

namespace WorkflowService.Storage.Relational;

/// <summary>What the relational stores register alike: their settings, their dialect and the store itself.</summary>
internal static class RelationalStoreServices
{
    /// <summary>Binds <typeparamref name="TOptions"/> to <paramref name="section"/>, checked at start-up.</summary>
    public static OptionsBuilder<TOptions> AddStoreOptions<TOptions>(this IServiceCollection services, IConfigurationSection section, string store)
        where TOptions : RelationalStoreOptions
    {
        services.AddSingleton<IValidateOptions<TOptions>>(new RelationalStoreOptionsValidator<TOptions>(section.Path, store));
        return services.AddSettings<TOptions>(section);
    }

    /// <summary>
    /// The store on <typeparamref name="TDialect"/>, its schema migrated over <paramref name="migrationConnection"/> (the
    /// store's connection string as the driver takes it).
    /// </summary>
    public static IServiceCollection AddRelationalStore<TDialect, TOptions>(this IServiceCollection services,
        Func<IServiceProvider, string> migrationConnection)
        where TDialect : SqlDialect
        where TOptions : RelationalStoreOptions
    {
        services.AddSingleton<SqlDialect, TDialect>();
        services.AddSingleton(p =>
        {
            var options = p.GetRequiredService<IOptions<TOptions>>().Value;
            return new SchemaMigrationSettings(migrationConnection(p), options.ApplyMigrationsAtStartup, options.MigrationTimeout);
        });
        services.AddSingleton<SchemaMigrator>();
        services.AddWorkflowStoreFacets<RelationalWorkflowStore>();
        // Collected where a meter provider exists (an exporter is configured): the group commit's size.
        services.ConfigureOpenTelemetryMeterProvider(metrics => metrics.AddMeter(StoreTelemetry.MeterName));
        return services;
    }

    /// <summary>
    /// Unique-key and concurrency failures are expected outcomes (idempotent starts, lost races) that the store turns
    /// into domain results; EF Core would log each as an error. Unexpected failures still surface as exceptions.
    /// </summary>
    public static void QuietExpectedFailures(WarningsConfigurationBuilder warnings) => warnings.Log(
        (RelationalEventId.CommandError, LogLevel.Debug),
        (CoreEventId.SaveChangesFailed, LogLevel.Debug),
        (CoreEventId.OptimisticConcurrencyException, LogLevel.Debug));
}
