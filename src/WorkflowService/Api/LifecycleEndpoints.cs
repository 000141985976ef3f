using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>
/// The database's lifecycle for operators: its schema and the releases it supports, migrating it, and purging ended
/// instances whose retention is over (the same work as the <c>schema</c>, <c>migrate</c> and <c>purge</c> commands).
/// </summary>
public static class LifecycleEndpoints
{
    public static RouteGroupBuilder MapLifecycleEndpoints(this IEndpointRouteBuilder routes)
    {
        // The database serves every tenant: only callers of the default tenant (credentials without a tenant) manage it.
        var group = routes.MapGroup("/admin").WithTags("Lifecycle").AddEndpointFilter(DefaultTenantOnly);
        group.MapGet("/schema", GetSchema).WithName("GetSchema").RequireAuthorization(Policies.Operate)
            .WithSummary("The database's schema, the range of releases it supports, and the steps applied and pending");
        group.MapPost("/schema/migrate", Migrate).WithName("MigrateSchema").RequireAuthorization(Policies.Administer)
            .WithSummary("Apply the pending schema steps (what a node does at start-up unless Store:ApplyMigrationsAtStartup is false)")
            .ProducesProblem(StatusCodes.Status409Conflict);
        group.MapGet("/retention", PreviewPurge).WithName("PreviewRetention").RequireAuthorization(Policies.Operate)
            .WithSummary("A dry run of the retention purge: the ended instances whose period is over, per period, deleting nothing");
        group.MapPost("/retention/purge", Purge).WithName("PurgeEndedInstances").RequireAuthorization(Policies.Administer)
            .WithSummary("Delete the ended instances whose retention period is over, now (the job does it every Retention:Interval)")
            .ProducesProblem(StatusCodes.Status409Conflict);
        return group;
    }

    private static async ValueTask<object?> DefaultTenantOnly(EndpointFilterInvocationContext context, EndpointFilterDelegate next) =>
        context.HttpContext.User.Tenant().Length > 0
            ? Problems.Forbidden("The database serves every tenant; only callers of the default tenant (credentials without a tenant) may manage it.")
            : await next(context);

    private static async Task<Ok<SchemaStatus>> GetSchema(IStoreSchema schema, CancellationToken cancellationToken) =>
        TypedResults.Ok(await schema.GetSchemaStatusAsync(cancellationToken));

    private static async Task<Results<Ok<SchemaStatus>, ProblemHttpResult>> Migrate(IStoreSchema schema, CancellationToken cancellationToken)
    {
        try
        {
            return TypedResults.Ok(await schema.MigrateAsync(cancellationToken));
        }
        catch (StoreSchemaException e)
        {
            // What stops a migration (another node's lock held too long, tables no step upgrades) is the operator's to fix.
            return TypedResults.Problem(title: "The schema cannot be migrated", detail: e.Message, statusCode: StatusCodes.Status409Conflict);
        }
    }

    private static Task<Results<Ok<RetentionReport>, ProblemHttpResult>> PreviewPurge(
        RetentionPurge purge, IOptions<RetentionOptions> options, CancellationToken cancellationToken) =>
        RunAsync(purge, options, dryRun: true, keepGoing: null, cancellationToken);

    /// <summary>
    /// Deletes batch after batch for at most half the request's time (Api:RequestTimeout), so the answer always comes:
    /// with <c>complete: false</c> when more is due (call again, or leave it to the job).
    /// </summary>
    private static async Task<Results<Ok<RetentionReport>, ProblemHttpResult>> Purge(RetentionPurge purge, IOptions<RetentionOptions> options,
        IOptions<ApiOptions> api, TimeProvider time, NodeIdentity node, CancellationToken cancellationToken)
    {
        if (NoPeriod(options) is { } refused)
        {
            return refused;
        }

        var started = time.GetTimestamp();
        var budget = api.Value.RequestTimeout / 2;
        var report = await purge.RunUnderLeaseAsync($"{node.Id}/api", _ => Task.FromResult(time.GetElapsedTime(started) < budget), cancellationToken);
        return report is null
            ? TypedResults.Problem(title: "A purge is running",
                detail: "The retention job (or another operator's purge) is deleting right now; try again once it is done.",
                statusCode: StatusCodes.Status409Conflict)
            : TypedResults.Ok(report);
    }

    private static async Task<Results<Ok<RetentionReport>, ProblemHttpResult>> RunAsync(
        RetentionPurge purge, IOptions<RetentionOptions> options, bool dryRun, Func<CancellationToken, Task<bool>>? keepGoing,
        CancellationToken cancellationToken) =>
        NoPeriod(options) is { } refused ? refused : TypedResults.Ok(await purge.RunAsync(dryRun, keepGoing, cancellationToken));

    private static ProblemHttpResult? NoPeriod(IOptions<RetentionOptions> options) => options.Value.Enabled
        ? null
        : TypedResults.Problem(title: "No retention period is set",
            detail: "Every ended instance and every delivered event is kept: set Retention:EndedInstances, Retention:Definitions:<name> or Retention:DeliveredEvents to purge.",
            statusCode: StatusCodes.Status409Conflict);
}
