using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.Logging;
using Polly;
using Polly.Retry;

namespace WorkflowService.Providers.WakeUp;

/// <summary>
/// Holds a wake-up listener open across failures, and knows its state (listening now, given up, how many times opened):
/// each pass opens it (and says so: <see cref="Opened"/>) and reads it until it breaks; a failure to open is retried with
/// exponential backoff and jitter, the limit counting failures in a row (a pass that opened resets it). After the limit
/// the listener gives up, and the node reports itself unhealthy so that an orchestrator replaces it. A listener that
/// breaks is opened again at once, unless it keeps breaking soon after it opens: then the passes are spaced out too.
/// </summary>
/// <param name="name">The transport, as the logs name it.</param>
public sealed partial class ReconnectingListener(string name, int maxReconnects, TimeSpan maxBackoff, TimeProvider time, ILogger logger)
{
    private static readonly TimeSpan FirstDelay = TimeSpan.FromMilliseconds(200);

    /// <summary>
    /// A pass shorter than this (or than the longest pause, when that is shorter) broke soon after it opened. Past it, a break
    /// (an election, a server restart) is reconnected at once, however long the longest pause is configured.
    /// </summary>
    private static readonly TimeSpan QuickBreakWithin = TimeSpan.FromSeconds(10);

    private volatile bool _listening;
    private volatile bool _gaveUp;
    private long _subscriptions;

    /// <summary>Whether the listener is open now.</summary>
    public bool IsListening => _listening;

    /// <summary>True once the listener stopped reconnecting: the node then needs replacing, not just patience.</summary>
    public bool HasGivenUp => _gaveUp;

    /// <summary>How many times the listener was opened (1 when it never had to reconnect).</summary>
    public long Subscriptions => Interlocked.Read(ref _subscriptions);

    /// <summary>A pass calls this once its listener is open (<paramref name="description"/>: what it listens to, for the log).</summary>
    public void Opened(string description)
    {
        _listening = true;
        Interlocked.Increment(ref _subscriptions);
        LogListening(logger, name, description);
    }

    /// <param name="listenOnce">One pass: calls <see cref="Opened"/> once open, then returns or throws when the listener broke; throws when it could not be opened.</param>
    /// <param name="down">Each failure and each break (logged here): what the transport's own state needs to forget; null for nothing.</param>
    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "A background listener: whatever ends it is reported and the node falls back to polling; letting it escape would fault an unobserved task.")]
    public async Task RunAsync(Func<CancellationToken, Task> listenOnce, Action<Exception>? down, CancellationToken stopping)
    {
        ArgumentNullException.ThrowIfNull(listenOnce);
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
                    _listening = false;
                    down?.Invoke(args.Outcome.Exception!);
                    LogDown(logger, args.Outcome.Exception!, name, failures, args.RetryDelay);
                    return default;
                },
            })
            .Build();
        var opened = 0L;
        var quickBreaks = 0;
        try
        {
            while (!stopping.IsCancellationRequested)
            {
                await reconnect.ExecuteAsync(async ct =>
                {
                    opened = time.GetTimestamp();
                    await PassAsync(listenOnce, down, ct).ConfigureAwait(false);
                }, stopping).ConfigureAwait(false);
                failures = 0;
                // It opened, then broke. After a pass that lasted, the next opens at once; passes that break soon after they
                // open are spaced out like failed opens (from the first pause, doubling, capped), so that a listener the
                // server accepts and drops at once does not spin.
                quickBreaks = time.GetElapsedTime(opened) < (maxBackoff < QuickBreakWithin ? maxBackoff : QuickBreakWithin) ? quickBreaks + 1 : 0;
                if (quickBreaks > 1)
                {
                    await Task.Delay(QuickBreakPause(quickBreaks - 1, maxBackoff), time, stopping).ConfigureAwait(false);
                }
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
        catch (Exception e)
        {
            _gaveUp = true;
            LogGaveUp(logger, e, name, maxReconnects);
        }
        finally
        {
            _listening = false;
        }
    }

    /// <summary>One pass: a failure before <see cref="Opened"/> is thrown (the retry's); a break after it ends the pass.</summary>
    private async Task PassAsync(Func<CancellationToken, Task> listenOnce, Action<Exception>? down, CancellationToken stopping)
    {
        try
        {
            await listenOnce(stopping).ConfigureAwait(false);
        }
        catch (Exception e) when (_listening && (e is not OperationCanceledException || !stopping.IsCancellationRequested))
        {
            // It was up and broke: a fresh pass reconnects, with a fresh count of failures.
            _listening = false;
            down?.Invoke(e);
            LogLost(logger, e, name);
        }
    }

    /// <summary>The pause before the next pass after <paramref name="inRow"/> quick breaks in a row: the first pause, doubled each time, capped.</summary>
    internal static TimeSpan QuickBreakPause(int inRow, TimeSpan maxBackoff)
    {
        var pause = FirstDelay * Math.Pow(2, Math.Min(inRow - 1, 30));
        return pause < maxBackoff ? pause : maxBackoff;
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "Wake-up listener ({Bus}) is listening: {Subscription}")]
    private static partial void LogListening(ILogger logger, string bus, string subscription);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Wake-up listener ({Bus}) lost its connection; reconnecting, and running on the poll alone meanwhile")]
    private static partial void LogLost(ILogger logger, Exception exception, string bus);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Wake-up listener ({Bus}) is down (failure {Failures}); running on the poll alone, reconnecting in {Backoff}")]
    private static partial void LogDown(ILogger logger, Exception exception, string bus, int failures, TimeSpan backoff);

    [LoggerMessage(Level = LogLevel.Critical, Message = "Wake-up listener ({Bus}) gave up after {Attempts} failed reconnects; this node runs on its poll alone until restarted")]
    private static partial void LogGaveUp(ILogger logger, Exception exception, string bus, int attempts);
}
