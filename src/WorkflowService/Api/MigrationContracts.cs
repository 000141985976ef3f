using System.ComponentModel;
using WorkflowService.Engine.Runtime;

namespace WorkflowService.Api;

/// <summary>Move one instance to another version; with dryRun, only say where its wait would land.</summary>
public sealed record MigrateInstanceRequest(
    [property: Description("The version to move the instance to.")] int ToVersion,
    [property: Description("Where a step of the old version continues in the new one (old step id -> new step id), for steps that were renamed.")] Dictionary<string, string>? StepMap = null,
    [property: Description("Only report where the instance's wait would land; change nothing.")] bool DryRun = false);

/// <summary>Move every waiting or suspended instance of a definition (optionally of one version) to another version.</summary>
public sealed record MigrateInstancesRequest(
    [property: Description("The definition whose instances move.")] string Definition,
    [property: Description("The version to move them to.")] int ToVersion,
    [property: Description("Only instances of this version; instances of every version when left out.")] int? FromVersion = null,
    [property: Description("Where a step of the old version continues in the new one (old step id -> new step id), for steps that were renamed.")] Dictionary<string, string>? StepMap = null,
    [property: Description("Only report where each instance's wait would land; change nothing.")] bool DryRun = false);

/// <summary>Where one instance waits now and would wait (or waits) in the target version; <c>problem</c> says why it cannot move.</summary>
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
