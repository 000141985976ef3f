using System.Text.Json;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// Starts instances, for a client's request and for a subWorkflow step alike: runs the new instance to its first wait
/// point in memory and writes it in one transaction. A first run that fails is stored and retried in the background.
/// </summary>
public sealed partial class InstanceStarter(
    IInstanceStore instances,
    IStoreClock clock,
    DefinitionRegistry definitions,
    WorkflowExecutor executor,
    WaitPointWriter writer,
    EngineMetrics metrics,
    IOptions<EngineOptions> engineOptions,
    ILogger<InstanceStarter> logger)
{
    public async Task<StartResult> StartAsync(StartRequest request, CancellationToken cancellationToken)
    {
        if (request.IdempotencyKey is not null || request.BusinessKey is not null)
        {
            var existing = await instances.FindInstanceAsync(request.Tenant, request.IdempotencyKey, request.DefinitionName, request.BusinessKey, cancellationToken)
                .ConfigureAwait(false);
            if (existing is not null)
            {
                return new StartResult(StartOutcome.Existing, existing);
            }
        }

        var definition = await definitions.GetAsync(request.Tenant, request.DefinitionName, request.Version, cancellationToken).ConfigureAwait(false);
        if (definition is null)
        {
            return new StartResult(StartOutcome.DefinitionNotFound, null);
        }

        var now = clock.Now();
        var instance = new WorkflowInstance
        {
            Id = Guid.CreateVersion7(),
            Tenant = request.Tenant,
            DefinitionName = definition.Name,
            DefinitionVersion = definition.Version,
            Status = InstanceStatus.Running,
            BusinessKey = request.BusinessKey,
            IdempotencyKey = request.IdempotencyKey,
            InputJson = request.InputJson,
            VariablesJson = definition.InitialVariablesJson,
            ParentInstanceId = request.ParentInstanceId,
            ParentWaitId = request.ParentWaitId,
            StartedBy = request.Actor,
            CreatedAt = now.UtcDateTime,
            UpdatedAt = now.UtcDateTime,
        };

        var run = executor.Start(definition, instance, now);
        var commit = run.Commit ?? RetryLater(definition, instance, run, now);
        commit.Actor = request.Actor;
        try
        {
            // Counted before waiters hear of the instance, as every commit's counter is.
            await writer.CreateAsync(commit, static m => m.InstanceStarted(), metrics, cancellationToken).ConfigureAwait(false);
        }
        catch (DuplicateInstanceException)
        {
            var existing = await instances.FindInstanceAsync(request.Tenant, request.IdempotencyKey, request.DefinitionName, request.BusinessKey, cancellationToken)
                .ConfigureAwait(false);
            if (existing is not null)
            {
                return new StartResult(StartOutcome.Existing, existing);
            }

            throw;
        }

        return new StartResult(StartOutcome.Created, commit.Instance);
    }

    /// <summary>
    /// A first run that failed: the instance is stored as running, with its search attributes over its input, and a
    /// $start signal retries it later.
    /// </summary>
    private WaitPointCommit RetryLater(CompiledDefinition definition, WorkflowInstance instance, RunResult run, StoreInstant now)
    {
        LogStartFailed(logger, instance.Id, run.Error);
        metrics.Retried();
        var fresh = instance.Clone();
        fresh.HistoryLength = 0;
        fresh.Status = InstanceStatus.Running;
        fresh.Error = run.Error;
        fresh.SearchAttributes = executor.SearchValues(definition, fresh);
        var commit = new WaitPointCommit { Instance = fresh, ExpectedVersion = -1 };
        commit.History.Add(new HistoryEvent
        {
            InstanceId = fresh.Id,
            Sequence = fresh.HistoryLength++,
            At = now.UtcDateTime,
            Type = HistoryEventTypes.InstanceStarted,
            DataJson = JsonSerializer.Serialize(
                new { definition = fresh.DefinitionName, version = fresh.DefinitionVersion, businessKey = fresh.BusinessKey, firstRunError = run.Error },
                EngineJson.Options),
        });
        commit.NewSignals.Add(new SignalMessage
        {
            Id = Guid.CreateVersion7(),
            InstanceId = fresh.Id,
            Name = SignalMessage.StartSignal,
            Status = SignalStatus.Pending,
            Attempts = 1,
            LastError = run.Error,
            DueAtMs = now.After(engineOptions.Value.BackoffFor(1)),
            CreatedAt = now.UtcDateTime,
        });
        return commit;
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "First run of instance {InstanceId} failed, retrying in the background: {Error}")]
    private static partial void LogStartFailed(ILogger logger, Guid instanceId, string? error);
}
