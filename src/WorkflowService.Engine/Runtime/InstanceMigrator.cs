using System.Text.Json;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>A request to move instances to another version of their definition.</summary>
/// <param name="ToVersion">The target version (of the same definition).</param>
/// <param name="StepMap">Where a waiting position lands when the target version renamed its step (old id → new id).</param>
public sealed record MigrationPlan(int ToVersion, IReadOnlyDictionary<string, string>? StepMap);

/// <summary>Where one instance's waiting position lands; <see cref="Problem"/> says why it would be stranded.</summary>
public sealed record MigrationStep(
    Guid InstanceId, int FromVersion, string? FromStep, int ToVersion, string? ToStep, bool Allowed, string? Problem);

public enum MigrationOutcome { Migrated, DryRun, Refused, DefinitionNotFound, InstanceNotFound }

public sealed record MigrationResult(MigrationOutcome Outcome, IReadOnlyList<MigrationStep> Steps);

/// <summary>
/// Moves waiting instances to another version of their definition. A plan is checked for every instance first; if
/// any instance would be stranded (its wait has no step of the same kind in the target version), nothing moves.
/// </summary>
public sealed class InstanceMigrator(
    IWorkflowStore store,
    DefinitionRegistry definitions,
    WorkflowRuntime runtime,
    EngineMetrics metrics,
    TimeProvider time,
    IOptions<EngineOptions> options)
{
    /// <summary>Largest number of instances one bulk migration may move.</summary>
    public const int MaxBatch = 500;

    public async Task<MigrationResult> MigrateAsync(IReadOnlyList<Guid> instanceIds, MigrationPlan plan, bool dryRun, CancellationToken cancellationToken)
    {
        var instances = new List<WorkflowInstance>();
        foreach (var id in instanceIds)
        {
            var instance = await store.GetInstanceAsync(id, cancellationToken).ConfigureAwait(false);
            if (instance is null)
            {
                return new MigrationResult(MigrationOutcome.InstanceNotFound, [new MigrationStep(id, 0, null, plan.ToVersion, null, false, "no such instance")]);
            }

            instances.Add(instance);
        }

        var steps = new List<MigrationStep>();
        foreach (var instance in instances)
        {
            var target = await definitions.GetAsync(instance.DefinitionName, plan.ToVersion, cancellationToken).ConfigureAwait(false);
            if (target is null)
            {
                return new MigrationResult(MigrationOutcome.DefinitionNotFound,
                    [new MigrationStep(instance.Id, instance.DefinitionVersion, instance.WaitStepId, plan.ToVersion, null, false,
                        $"definition '{instance.DefinitionName}' has no version {plan.ToVersion}")]);
            }

            steps.Add(Check(instance, target, plan));
        }

        if (steps.Any(s => !s.Allowed))
        {
            return new MigrationResult(MigrationOutcome.Refused, steps);
        }

        if (dryRun)
        {
            return new MigrationResult(MigrationOutcome.DryRun, steps);
        }

        var applied = new List<MigrationStep>();
        foreach (var step in steps)
        {
            applied.Add(await ApplyAsync(step, cancellationToken).ConfigureAwait(false));
        }

        return new MigrationResult(MigrationOutcome.Migrated, applied);
    }

    private static MigrationStep Check(WorkflowInstance instance, CompiledDefinition target, MigrationPlan plan)
    {
        MigrationStep Refuse(string problem, string? to = null) =>
            new(instance.Id, instance.DefinitionVersion, instance.WaitStepId, target.Version, to, false, problem);

        if (instance.Status is not (InstanceStatus.Waiting or InstanceStatus.Suspended) || instance.WaitStepId is null)
        {
            return Refuse($"the instance is {instance.Status}; only a waiting or suspended instance can be migrated");
        }

        var to = plan.StepMap is not null && plan.StepMap.TryGetValue(instance.WaitStepId, out var mapped) ? mapped : instance.WaitStepId;
        if (!target.Steps.TryGetValue(to, out var step))
        {
            return Refuse($"it waits at '{instance.WaitStepId}', and version {target.Version} has no step '{to}' (map it in stepMap)", to);
        }

        var compatible = instance.WaitKind switch
        {
            WaitKind.Signal => step.Kind == StepKind.WaitForSignal && step.Signal == instance.WaitSignal
                               && (instance.WaitTimerId is null) == (step.Timeout is null),
            WaitKind.Timer => step.Kind == StepKind.Delay,
            WaitKind.Task => step.Kind == StepKind.HumanTask,
            WaitKind.CallOut => step.Kind == StepKind.Http,
            _ => false,
        };
        return compatible
            ? new MigrationStep(instance.Id, instance.DefinitionVersion, instance.WaitStepId, target.Version, to, true, null)
            : Refuse($"it waits at '{instance.WaitStepId}' ({instance.WaitKind}{(instance.WaitSignal is null ? "" : $" for '{instance.WaitSignal}'")}), "
                     + $"but '{to}' in version {target.Version} is a different wait", to);
    }

    private async Task<MigrationStep> ApplyAsync(MigrationStep step, CancellationToken cancellationToken)
    {
        for (var attempt = 0; ; attempt++)
        {
            var instance = (await store.GetInstanceAsync(step.InstanceId, cancellationToken).ConfigureAwait(false))!;
            if (instance.DefinitionVersion != step.FromVersion || instance.WaitStepId != step.FromStep
                || instance.Status is not (InstanceStatus.Waiting or InstanceStatus.Suspended))
            {
                // It moved on since the plan was checked: leave it where it is rather than move it by a stale plan.
                return step with { Allowed = false, Problem = "the instance moved on while the migration ran; it was left as it is" };
            }

            var now = time.GetUtcNow().UtcDateTime;
            var state = instance.Clone();
            state.DefinitionVersion = step.ToVersion;
            state.WaitStepId = step.ToStep;
            state.UpdatedAt = now;
            var commit = new WaitPointCommit { Instance = state, ExpectedVersion = instance.Version };
            commit.History.Add(new HistoryEvent
            {
                InstanceId = state.Id,
                Sequence = state.HistoryLength++,
                At = now,
                Type = HistoryEventTypes.InstanceMigrated,
                StepId = step.ToStep,
                DataJson = JsonSerializer.Serialize(
                    new { fromVersion = step.FromVersion, fromStep = step.FromStep, toVersion = step.ToVersion, toStep = step.ToStep },
                    DefinitionCompiler.JsonOptions),
            });
            try
            {
                await store.CommitAsync(commit, cancellationToken).ConfigureAwait(false);
                runtime.AfterCommit(commit);
                return step;
            }
            catch (ConcurrencyConflictException) when (attempt < options.Value.MaxConflictRetries)
            {
                metrics.Conflict();
            }
        }
    }
}
