using System.CommandLine;
using System.Globalization;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;

namespace WorkflowService.Hosting;

/// <summary>
/// The lifecycle commands of the same binary, for operators: <c>schema</c> (the schema, the releases it supports, the
/// steps applied and pending), <c>migrate</c> (apply them, for deployments that forbid DDL from the application) and
/// <c>purge</c> (delete ended instances whose retention is over now, or count them with <c>--dry-run</c>). Each reads the
/// same settings as the service (appsettings.json, environment, and any <c>--Section:Key=value</c> after the command).
/// </summary>
public static class OperatorCommands
{
    private static readonly string[] Names = ["schema", "migrate", "purge"];

    /// <summary>Whether <paramref name="args"/> names a command rather than starting the service.</summary>
    public static bool IsCommand(string[] args) => args.Length > 0 && Names.Contains(args[0], StringComparer.Ordinal);

    /// <summary>Runs the command: 0 when it did its work, 1 with a one-line reason when it could not.</summary>
    public static int Run(string[] args)
    {
        var schema = new Command("schema", "Show the database's workflow schema, the releases it supports, and the steps applied and pending.");
        var migrate = new Command("migrate", "Apply the pending schema steps (what a node does at start-up unless Store:ApplyMigrationsAtStartup is false).");
        var dryRun = new Option<bool>("--dry-run") { Description = "Only count the ended instances whose retention period is over." };
        var purge = new Command("purge", "Delete the ended instances whose retention period (Retention:EndedInstances, Retention:Definitions) is over, now.")
        {
            dryRun,
        };
        var root = new RootCommand("WorkflowService: runs the service, or one of these lifecycle commands.");
        foreach (var command in new[] { schema, migrate, purge })
        {
            // Settings after the command go to the configuration, as they do when the service runs (--Store:Provider=PostgreSql).
            command.TreatUnmatchedTokensAsErrors = false;
            root.Subcommands.Add(command);
        }

        schema.SetAction((parse, ct) => WithServicesAsync(parse, ShowSchemaAsync, ct));
        migrate.SetAction((parse, ct) => WithServicesAsync(parse, MigrateAsync, ct));
        purge.SetAction((parse, ct) => WithServicesAsync(parse, (services, ct2) => PurgeAsync(services, parse.GetValue(dryRun), ct2), ct));
        return root.Parse(args).Invoke();
    }

    private static async Task<int> WithServicesAsync(ParseResult parse, Func<IServiceProvider, CancellationToken, Task<int>> command,
        CancellationToken cancellationToken)
    {
        try
        {
            var builder = WebApplication.CreateBuilder(new WebApplicationOptions
            {
                Args = [.. parse.UnmatchedTokens],
                ContentRootPath = AppContext.BaseDirectory,
            });
            builder.AddWorkflowService();
            await using var app = builder.Build();
            // Only the settings a command uses are checked (as it reads them): a command needs no listener or authentication.
            return await command(app.Services, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (StartupFailure.Describe(e) is { } message)
        {
            await Console.Error.WriteLineAsync(message).ConfigureAwait(false);
            return 1;
        }
    }

    private static async Task<int> ShowSchemaAsync(IServiceProvider services, CancellationToken cancellationToken)
    {
        var status = await services.GetRequiredService<IStoreSchema>().GetSchemaStatusAsync(cancellationToken).ConfigureAwait(false);
        await Console.Out.WriteAsync(Describe(status)).ConfigureAwait(false);
        return 0;
    }

    private static async Task<int> MigrateAsync(IServiceProvider services, CancellationToken cancellationToken)
    {
        var status = await services.GetRequiredService<IStoreSchema>().MigrateAsync(cancellationToken).ConfigureAwait(false);
        await Console.Out.WriteAsync(Describe(status)).ConfigureAwait(false);
        return 0;
    }

    private static async Task<int> PurgeAsync(IServiceProvider services, bool dryRun, CancellationToken cancellationToken)
    {
        if (!services.GetRequiredService<IOptions<RetentionOptions>>().Value.Enabled)
        {
            await Console.Out.WriteLineAsync(
                "No retention period is set (Retention:EndedInstances, Retention:Definitions:<name>): every ended instance is kept.").ConfigureAwait(false);
            return 0;
        }

        var status = await services.GetRequiredService<IStoreSchema>().GetSchemaStatusAsync(cancellationToken).ConfigureAwait(false);
        if (!status.NodeSupported)
        {
            throw new StoreSchemaException(status.OldestSupported is { } oldest && status.NodeSchema < oldest
                ? $"This release (schema {status.NodeSchema}) is older than the releases the {status.Store} database supports ({Range(status)}): use a newer release's binary."
                : $"The {status.Store} database's schema ({Range(status)}) is behind this release (schema {status.NodeSchema}): run `migrate` first.");
        }

        var purge = services.GetRequiredService<RetentionPurge>();
        var report = dryRun
            ? await purge.RunAsync(dryRun: true, keepGoing: null, cancellationToken).ConfigureAwait(false)
            : await purge.RunUnderLeaseAsync($"command-{Environment.MachineName}-{Environment.ProcessId}", keepGoing: null, cancellationToken)
                .ConfigureAwait(false);
        if (report is null)
        {
            await Console.Error.WriteLineAsync("The retention job (or another purge) is deleting right now; try again once it is done.").ConfigureAwait(false);
            return 1;
        }

        await Console.Out.WriteAsync(Describe(report)).ConfigureAwait(false);
        return 0;
    }

    /// <summary>The schema status as the <c>schema</c> and <c>migrate</c> commands print it.</summary>
    public static string Describe(SchemaStatus status)
    {
        var text = new System.Text.StringBuilder();
        var invariant = CultureInfo.InvariantCulture;
        text.AppendLine(invariant, $"store: {status.Store}");
        text.AppendLine(invariant, $"database schema: {Range(status)}");
        text.AppendLine(invariant, $"this release: schema {status.NodeSchema} ({(status.NodeSupported ? "supported" : "not supported until migrated")})");
        foreach (var step in status.Applied)
        {
            text.AppendLine(invariant, $"applied {step.Version} at {step.AppliedAt:u}: {step.Description}");
        }

        foreach (var step in status.Pending)
        {
            text.AppendLine(invariant, $"pending {step.Version}: {step.Description}");
        }

        foreach (var index in status.MissingIndexes)
        {
            text.AppendLine(invariant, $"missing index {index} (built by migrate)");
        }

        return text.ToString();
    }

    private static string Range(SchemaStatus status) => status.Newest is { } newest
        ? $"{newest}, supporting releases of schema {status.OldestSupported} to {newest}"
        : "none (an empty database)";

    /// <summary>The purge's report as the <c>purge</c> command prints it.</summary>
    public static string Describe(RetentionReport report)
    {
        var text = new System.Text.StringBuilder();
        var invariant = CultureInfo.InvariantCulture;
        foreach (var scope in report.Scopes)
        {
            text.AppendLine(invariant,
                $"{scope.Definition ?? "every other definition"}: kept {scope.Period}, ended before {scope.EndedBefore:u}: {scope.Instances} instances {(report.DryRun ? "due" : "deleted")}");
        }

        if (report.DeliveredEvents is { } delivered)
        {
            text.AppendLine(invariant,
                $"delivered events: kept {delivered.Period}, delivered before {delivered.DeliveredBefore:u}: {delivered.Deliveries} deliveries {(report.DryRun ? "due" : "deleted")}");
        }

        if (!report.DryRun)
        {
            text.AppendLine(invariant,
                $"rows deleted: {report.Rows.Total} ({report.Rows.Instances} instances, {report.Rows.History} history, {report.Rows.Signals} signals, {report.Rows.Tasks} tasks, {report.Rows.Deliveries} deliveries)");
        }

        return text.ToString();
    }
}
