using WorkflowService.Engine.Runtime;

namespace WorkflowService.Api;

/// <summary>Move one instance to another version; with dryRun, only say where its wait would land.</summary>
public sealed record MigrateInstanceRequest(int ToVersion, Dictionary<string, string>? StepMap, bool DryRun);

/// <summary>Move every waiting or suspended instance of a definition (optionally of one version) to another version.</summary>
public sealed record MigrateInstancesRequest(string Definition, int? FromVersion, int ToVersion, Dictionary<string, string>? StepMap, bool DryRun);

public sealed record MigrationStepView(Guid InstanceId, int FromVersion, string? FromStep, int ToVersion, string? ToStep, bool Allowed, string? Problem)
{
    public static MigrationStepView From(MigrationStep s) => new(s.InstanceId, s.FromVersion, s.FromStep, s.ToVersion, s.ToStep, s.Allowed, s.Problem);
}

/// <summary>What a migration did (or, for a dry run, would do) per instance.</summary>
public sealed record MigrationReport(bool DryRun, int Migrated, IReadOnlyList<MigrationStepView> Instances);

/// <summary>The 422 answer to a plan that would strand instances: which ones, and why.</summary>
public sealed class MigrationProblemDetails : Microsoft.AspNetCore.Mvc.ProblemDetails
{
    public IReadOnlyList<MigrationStepView> Instances { get; init; } = [];
}
