using System.Security.Claims;
using Microsoft.AspNetCore.Http.HttpResults;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>Moving running instances to another version of their definition, with a dry run first.</summary>
public static class MigrationEndpoints
{
    public static RouteGroupBuilder MapMigrationEndpoints(this IEndpointRouteBuilder routes)
    {
        var group = routes.MapGroup("/instances").WithTags("Migrations").RequireAuthorization(Policies.Operate);
        group.MapPost("/{id:guid}/migrate", MigrateOne).WithName("MigrateInstance")
            .WithSummary("Move a waiting instance to another version (dryRun: only report where its wait lands)")
            .ProducesValidationProblem()
            .Produces<MigrationProblemDetails>(StatusCodes.Status422UnprocessableEntity, "application/problem+json")
            .ProducesProblem(StatusCodes.Status404NotFound)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        group.MapPost("/migrate", MigrateMany).WithName("MigrateInstances")
            .WithSummary("Move every waiting instance of a definition (optionally of one version) to another version")
            .ProducesValidationProblem()
            .Produces<MigrationProblemDetails>(StatusCodes.Status422UnprocessableEntity, "application/problem+json")
            .ProducesProblem(StatusCodes.Status404NotFound)
            .ProducesProblem(StatusCodes.Status413PayloadTooLarge);
        return group;
    }

    private static async Task<Results<Ok<MigrationReport>, ValidationProblem, ProblemHttpResult>> MigrateOne(
        Guid id, MigrateInstanceRequest request, InstanceMigrator migrator, ClaimsPrincipal user, CancellationToken cancellationToken)
    {
        if (request.ToVersion <= 0)
        {
            return Problems.Invalid("toVersion", "toVersion must be a positive version number");
        }

        var result = await migrator.MigrateAsync([id], new MigrationPlan(request.ToVersion, request.StepMap, user.Actor(), user.Tenant()), request.DryRun, cancellationToken);
        return Answer(result, request.DryRun);
    }

    private static async Task<Results<Ok<MigrationReport>, ValidationProblem, ProblemHttpResult>> MigrateMany(
        MigrateInstancesRequest request, InstanceMigrator migrator, IOperatorQueries store, ClaimsPrincipal user,
        CancellationToken cancellationToken)
    {
        if (!DefinitionCompiler.IsValidName(request.Definition))
        {
            return Problems.Invalid("definition", "definition must name a published definition");
        }

        if (request.ToVersion <= 0)
        {
            return Problems.Invalid("toVersion", "toVersion must be a positive version number");
        }

        var ids = new List<Guid>();
        foreach (var status in new[] { InstanceStatus.Waiting, InstanceStatus.Suspended })
        {
            var page = await store.QueryInstancesAsync(
                new InstanceQuery(request.Definition, status, Limit: InstanceMigrator.MaxBatch + 1, DefinitionVersion: request.FromVersion,
                    Tenant: user.Tenant()), cancellationToken);
            ids.AddRange(page.Items.Where(i => i.DefinitionVersion != request.ToVersion).Select(i => i.Id));
        }

        if (ids.Count > InstanceMigrator.MaxBatch)
        {
            return Problems.Invalid("definition", $"more than {InstanceMigrator.MaxBatch} instances match; narrow the migration with fromVersion");
        }

        var result = await migrator.MigrateAsync(ids, new MigrationPlan(request.ToVersion, request.StepMap, user.Actor(), user.Tenant()), request.DryRun, cancellationToken);
        return Answer(result, request.DryRun);
    }

    private static Results<Ok<MigrationReport>, ValidationProblem, ProblemHttpResult> Answer(MigrationResult result, bool dryRun)
    {
        var views = result.Steps.Select(MigrationStepView.From).ToList();
        return result.Outcome switch
        {
            MigrationOutcome.Migrated or MigrationOutcome.DryRun =>
                TypedResults.Ok(new MigrationReport(dryRun, dryRun ? 0 : views.Count(v => v.Allowed), views)),
            MigrationOutcome.Refused => TypedResults.Problem(
                detail: $"The plan would strand {views.Count(v => !v.Allowed)} instance(s): "
                        + string.Join("; ", views.Where(v => !v.Allowed).Select(v => $"{v.InstanceId}: {v.Problem}")) + ". Nothing was migrated.",
                statusCode: StatusCodes.Status422UnprocessableEntity,
                title: "Migration refused",
                extensions: new Dictionary<string, object?> { ["instances"] = views }),
            _ => Problems.NotFound(views.FirstOrDefault()?.Problem ?? "not found"),
        };
    }
}
