using System.Text.Json;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>A request to move instances to another version of their definition.</summary>
/// <param name="ToVersion">The target version (of the same definition).</param>
/// <param name="StepMap">Where a waiting position lands when the target version renamed its step (old id → new id).</param>
/// <param name="Tenant">The caller's tenant: an instance of another tenant is not found, and nothing moves.</param>
public sealed record MigrationPlan(int ToVersion, IReadOnlyDictionary<string, string>? StepMap, string? Actor = null, string Tenant = "");

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
    IInstanceStore store,
    DefinitionRegistry definitions,
    IStoreClock clock,
    WaitPointWriter writer,
    EngineMetrics metrics,
    IOptions<EngineOptions> options,
    WorkflowExecutor executor,
    ISearchAttributeStore search)
{
    /// <summary>Largest number of instances one bulk migration may move.</summary>
    public const int MaxBatch = 500;

    public async Task<MigrationResult> MigrateAsync(IReadOnlyList<Guid> instanceIds, MigrationPlan plan, bool dryRun, CancellationToken cancellationToken)
    {
        var instances = new List<WorkflowInstance>();
        foreach (var id in instanceIds)
        {
            var instance = await store.GetInstanceAsync(plan.Tenant, id, cancellationToken).ConfigureAwait(false);
            if (instance is null)
            {
                return new MigrationResult(MigrationOutcome.InstanceNotFound, [new MigrationStep(id, 0, null, plan.ToVersion, null, false, "no such instance")]);
            }

            instances.Add(instance);
        }

        var steps = new List<MigrationStep>();
        var targets = new List<CompiledDefinition>();
        foreach (var instance in instances)
        {
            var target = await definitions.GetAsync(instance.Tenant, instance.DefinitionName, plan.ToVersion, cancellationToken).ConfigureAwait(false);
            if (target is null)
            {
                return new MigrationResult(MigrationOutcome.DefinitionNotFound,
                    [new MigrationStep(instance.Id, instance.DefinitionVersion, instance.WaitStepId, plan.ToVersion, null, false,
                        $"definition '{instance.DefinitionName}' has no version {plan.ToVersion}")]);
            }

            steps.Add(Check(instance, target, plan));
            targets.Add(target);
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
        for (var i = 0; i < steps.Count; i++)
        {
            applied.Add(await ApplyAsync(steps[i], instances[i], targets[i], plan, cancellationToken).ConfigureAwait(false));
        }

        return new MigrationResult(MigrationOutcome.Migrated, applied);
    }

    /// <summary>
    /// The values of the target version's attributes that a later commit would not evaluate again (those of the input, the
    /// variables and constants: a commit evaluates them at the start, or when a run changes the variables); null when
    /// there are none. The others come at the instance's next commit; <paramref name="dropped"/> are emptied.
    /// </summary>
    private IReadOnlyList<Search.SearchAttributeValue>? SettledSearchValues(CompiledDefinition target, WorkflowInstance state,
        List<Search.SearchAttributeValue> dropped)
    {
        if (target.SearchAttributes.Count == 0)
        {
            return dropped.Count == 0 ? null : dropped;
        }

        var settled = executor.SearchValues(target, state, static reads => (reads & Expressions.ExpressionReads.Anything) == 0);
        return dropped.Count == 0 ? settled : [.. settled ?? [], .. dropped];
    }

    /// <summary>
    /// The attributes the instance's version had and the target has not, emptied, so that a filter on them no longer
    /// finds it. When that version is no longer found, every attribute of the tenant the target has not (emptying a value
    /// the instance never had changes nothing). Between two versions without attributes, none: the commit writes what
    /// it wrote before.
    /// </summary>
    private async Task<List<Search.SearchAttributeValue>> DroppedAsync(WorkflowInstance instance, CompiledDefinition target,
        CancellationToken cancellationToken)
    {
        var source = await definitions.GetAsync(instance.Tenant, instance.DefinitionName, instance.DefinitionVersion, cancellationToken)
            .ConfigureAwait(false);
        IEnumerable<(string Name, Search.Query.SearchValueType Type)> had = source is not null
            ? source.SearchAttributes.Select(a => (a.Name, a.Type))
            : (await search.GetSearchAttributesAsync(instance.Tenant, cancellationToken).ConfigureAwait(false)).Select(a => (a.Name, a.Type));
        return had.Where(a => !target.SearchAttributes.Any(t => t.Name == a.Name))
            .Select(a => new Search.SearchAttributeValue(a.Name, a.Type, null)).ToList();
    }

    private static MigrationStep Check(WorkflowInstance instance, CompiledDefinition target, MigrationPlan plan)
    {
        MigrationStep Refuse(string problem, string? to = null) =>
            new(instance.Id, instance.DefinitionVersion, instance.WaitStepId, target.Version, to, false, problem);

        if (instance.Status is not (InstanceStatus.Waiting or InstanceStatus.Suspended) || instance.WaitStepId is null)
        {
            return Refuse($"the instance is {instance.Status}; only a waiting or suspended instance can be migrated");
        }

        var to = Map(plan, instance.WaitStepId);
        if (!target.Steps.TryGetValue(to, out var step))
        {
            return Refuse($"it waits at '{instance.WaitStepId}', and version {target.Version} has no step '{to}' (map it in stepMap)", to);
        }

        if (step.Within is not null)
        {
            return Refuse($"it waits at '{instance.WaitStepId}', and '{to}' in version {target.Version} is inside {step.Within}, "
                          + "which an instance can only enter through its parallel step", to);
        }

        if (instance.WaitKind == WaitKind.Parallel)
        {
            return CheckParallel(instance, target, plan, step) is { } problem
                ? Refuse(problem, to)
                : new MigrationStep(instance.Id, instance.DefinitionVersion, instance.WaitStepId, target.Version, to, true, null);
        }

        return Compatible(instance.WaitKind, instance.WaitSignal, instance.WaitSignalId, step)
            ? new MigrationStep(instance.Id, instance.DefinitionVersion, instance.WaitStepId, target.Version, to, true, null)
            : Refuse($"it waits at '{instance.WaitStepId}' ({instance.WaitKind}{(instance.WaitSignal is null ? "" : $" for '{instance.WaitSignal}'")}), "
                     + $"but '{to}' in version {target.Version} is a different wait", to);
    }

    private static string Map(MigrationPlan plan, string stepId) =>
        plan.StepMap is not null && plan.StepMap.TryGetValue(stepId, out var mapped) ? mapped : stepId;

    /// <summary>Whether a wait of this kind (for this signal, with or without a timer) can carry over to <paramref name="step"/>.</summary>
    private static bool Compatible(WaitKind? kind, string? signal, Guid? timeout, CompiledStep step) => kind switch
    {
        WaitKind.Signal => step is WaitForSignalStep wait && wait.Signal == signal && (timeout is null) == (wait.Timeout is null),
        WaitKind.Timer => step.Kind == StepKind.Delay,
        WaitKind.Task => step.Kind == StepKind.HumanTask,
        WaitKind.CallOut => step.Kind == StepKind.Http,
        _ => false,
    };

    /// <summary>
    /// An instance inside a parallel step lands on a parallel step with the same branches (by name, none more), and
    /// each branch that still waits lands on a step of the same kind of wait in its own branch. Null when it fits.
    /// </summary>
    private static string? CheckParallel(WorkflowInstance instance, CompiledDefinition target, MigrationPlan plan, CompiledStep step)
    {
        if (step is ForEachStep || instance.ParallelBranches() is [{ Index: not null }, ..])
        {
            return $"it is inside the forEach step '{instance.WaitStepId}': an instance does not move to another version while its items run";
        }

        if (step is not ParallelStep parallel)
        {
            return $"it is inside the parallel step '{instance.WaitStepId}', but '{step.Id}' in version {target.Version} is a {step.Kind} step";
        }

        var branches = ParallelBranch.Parse(instance.BranchesJson);
        var names = branches.Select(b => b.Name).ToHashSet(StringComparer.Ordinal);
        if (parallel.ParallelBranches.FirstOrDefault(b => !names.Contains(b.Name)) is { } extra)
        {
            return $"'{step.Id}' in version {target.Version} has the branch '{extra.Name}', which the instance never started";
        }

        foreach (var branch in branches)
        {
            if (!parallel.ParallelBranches.Any(b => b.Name == branch.Name))
            {
                return $"'{step.Id}' in version {target.Version} has no branch '{branch.Name}'";
            }

            if (branch.WaitStepId is null)
            {
                continue;
            }

            var to = Map(plan, branch.WaitStepId);
            if (!target.Steps.TryGetValue(to, out var wait) || wait.Within != new ParallelScope(step.Id, branch.Name))
            {
                return $"its branch '{branch.Name}' waits at '{branch.WaitStepId}', and version {target.Version} has no step '{to}' "
                       + $"in branch '{branch.Name}' of '{step.Id}' (map it in stepMap)";
            }

            if (!Compatible(branch.WaitKind, branch.WaitSignal, branch.WaitSignalId, wait))
            {
                return $"its branch '{branch.Name}' waits at '{branch.WaitStepId}' ({branch.WaitKind}"
                       + $"{(branch.WaitSignal is null ? "" : $" for '{branch.WaitSignal}'")}), but '{to}' in version {target.Version} is a different wait";
            }
        }

        return null;
    }

    private async Task<MigrationStep> ApplyAsync(MigrationStep step, WorkflowInstance planned, CompiledDefinition target, MigrationPlan plan,
        CancellationToken cancellationToken)
    {
        for (var attempt = 0; ; attempt++)
        {
            var instance = (await store.GetInstanceAsync(plan.Tenant, step.InstanceId, cancellationToken).ConfigureAwait(false))!;
            if (instance.DefinitionVersion != step.FromVersion || instance.WaitStepId != step.FromStep
                || instance.BranchesJson != planned.BranchesJson
                || instance.Status is not (InstanceStatus.Waiting or InstanceStatus.Suspended))
            {
                // It moved on since the plan was checked: leave it where it is rather than move it by a stale plan.
                return step with { Allowed = false, Problem = "the instance moved on while the migration ran; it was left as it is" };
            }

            var now = clock.Now().UtcDateTime;
            var state = instance.Clone();
            state.DefinitionVersion = step.ToVersion;
            state.WaitStepId = step.ToStep;
            if (state.BranchesJson is not null)
            {
                var branches = ParallelBranch.Parse(state.BranchesJson);
                foreach (var branch in branches.Where(b => b.WaitStepId is not null))
                {
                    branch.WaitStepId = Map(plan, branch.WaitStepId!);
                }

                state.BranchesJson = ParallelBranch.Serialize(branches);
            }

            state.UpdatedAt = now;
            state.SearchAttributes = SettledSearchValues(target, state, await DroppedAsync(instance, target, cancellationToken).ConfigureAwait(false));
            var commit = new WaitPointCommit { Instance = state, ExpectedVersion = instance.Version, Actor = plan.Actor };
            commit.History.Add(new HistoryEvent
            {
                InstanceId = state.Id,
                Sequence = state.HistoryLength++,
                At = now,
                Type = HistoryEventTypes.InstanceMigrated,
                StepId = step.ToStep,
                DataJson = JsonSerializer.Serialize(
                    new { fromVersion = step.FromVersion, fromStep = step.FromStep, toVersion = step.ToVersion, toStep = step.ToStep },
                    EngineJson.Options),
            });
            try
            {
                await writer.CommitAsync(commit, cancellationToken).ConfigureAwait(false);
                return step;
            }
            catch (ConcurrencyConflictException) when (attempt < options.Value.MaxConflictRetries)
            {
                metrics.Conflict();
            }
        }
    }
}
