using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.Logging;
using Polly;
using Polly.Retry;

namespace WorkflowService.Engine.WakeUp;

/// <summary>
/// Holds a wake-up listener open across failures: each pass opens it and reads it until it breaks; a failure to open is
/// retried with exponential backoff and jitter, the limit counting failures in a row (a pass that opened resets it). After
/// the limit the listener gives up, and the node reports itself unhealthy so that an orchestrator replaces it.
/// </summary>
public static partial class ReconnectingListener
{
    private static readonly TimeSpan FirstDelay = TimeSpan.FromMilliseconds(200);

    /// <param name="listenOnce">One pass: returns when the listener broke, throws when it could not be opened.</param>
    /// <param name="name">The transport, as the logs name it.</param>
    /// <param name="down">Each failure (logged here): what the listener's state needs to forget.</param>
    /// <param name="gaveUp">After the last failure (logged here): no attempt is made any more.</param>
    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "A background listener: whatever ends it is reported and the node falls back to polling; letting it escape would fault an unobserved task.")]
    public static async Task RunAsync(Func<CancellationToken, Task> listenOnce, string name, int maxReconnects, TimeSpan maxBackoff,
        TimeProvider time, ILogger logger, Action<Exception> down, Action gaveUp, CancellationToken stopping)
    {
        ArgumentNullException.ThrowIfNull(listenOnce);
        ArgumentNullException.ThrowIfNull(down);
        ArgumentNullException.ThrowIfNull(gaveUp);
        var failures = 0;
        var reconnect = new ResiliencePipelineBuilder { TimeProvider = time }
            .AddRetry(new RetryStrategyOptions
            {
                ShouldHandle = new PredicateBuilder().Handle<Exception>(e => e is not OperationCanceledException || !stopping.IsCancellationRequested),
                MaxRetryAttempts = maxReconnects,
                BackoffType = DelayBackoffType.Exponential,
                UseJitter = true,
                Delay = FirstDelay,
                MaxDelay = maxBackoff,
                OnRetry = args =>
                {
                    failures++;
                    down(args.Outcome.Exception!);
                    LogDown(logger, args.Outcome.Exception!, name, failures, args.RetryDelay);
                    return default;
                },
            })
            .Build();
        try
        {
            while (!stopping.IsCancellationRequested)
            {
                await reconnect.ExecuteAsync(async ct => await listenOnce(ct).ConfigureAwait(false), stopping).ConfigureAwait(false);
                failures = 0;
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
        catch (Exception e)
        {
            gaveUp();
            LogGaveUp(logger, e, name, maxReconnects);
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Wake-up listener ({Bus}) is down (failure {Failures}); running on the poll alone, reconnecting in {Backoff}")]
    private static partial void LogDown(ILogger logger, Exception exception, string bus, int failures, TimeSpan backoff);

    [LoggerMessage(Level = LogLevel.Critical, Message = "Wake-up listener ({Bus}) gave up after {Attempts} failed reconnects; this node runs on its poll alone until restarted")]
    private static partial void LogGaveUp(ILogger logger, Exception exception, string bus, int attempts);
}
