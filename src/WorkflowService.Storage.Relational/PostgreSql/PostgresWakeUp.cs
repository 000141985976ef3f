using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Npgsql;
using Polly.Retry;
using Polly;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Storage.Relational.PostgreSql;

/// <summary>
/// Wake-ups across nodes over LISTEN/NOTIFY. Every node keeps one listening connection that reconnects with capped
/// backoff; while it is down the node runs on its bounded poll and reports itself degraded. Notifications are sent
/// outside the signal's transaction and coalesced, so NOTIFY never serialises signal commits.
/// </summary>
public sealed partial class PostgresWakeUp(
    NpgsqlDataSource dataSource, InProcessWakeUp local, TimeProvider time, ILogger<PostgresWakeUp> logger)
    : IWakeUpTransport, IHostedService, IAsyncDisposable
{
    public const string ChannelName = "workflow_wakeup";
    private static readonly TimeSpan MaxBackoff = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan IdleCheck = TimeSpan.FromSeconds(30);
    /// <summary>Failed reconnects in a row before the listener gives up (about eight hours at the 30 s cap).</summary>
    private const int MaxReconnects = 1000;

    private readonly CancellationTokenSource _stopping = new();
    private readonly SemaphoreSlim _sendRequested = new(0, 1);
    private long _pendingDueMs = long.MaxValue;
    private volatile bool _listening;
    private volatile bool _gaveUp;
    private int _disposed;
    private Task _listener = Task.CompletedTask;
    private Task _sender = Task.CompletedTask;

    private readonly string _senderId = Guid.NewGuid().ToString("N");
    private long _requested;
    private long _sent;

    public bool IsHealthy => _listening;

    /// <summary>True once the listener stopped reconnecting: the node then needs replacing, not just patience.</summary>
    public bool HasGivenUp => _gaveUp;

    /// <summary>Wake-ups asked for by this node's commits.</summary>
    public long NotificationsRequested => Interlocked.Read(ref _requested);

    /// <summary>NOTIFY statements actually sent: fewer than requested when commits come faster than one round trip.</summary>
    public long NotificationsSent => Interlocked.Read(ref _sent);

    /// <summary>The process id of the listening connection, for operators (and the lost-wake-up test).</summary>
    public int? ListenerProcessId { get; private set; }

    public void Notify(long dueAtMs)
    {
        local.Notify(dueAtMs);
        Interlocked.Increment(ref _requested);
        // Keep the earliest due time among notifications not yet sent, and make sure one send is scheduled.
        long current;
        do
        {
            current = Interlocked.Read(ref _pendingDueMs);
            if (current <= dueAtMs)
            {
                break;
            }
        }
        while (Interlocked.CompareExchange(ref _pendingDueMs, dueAtMs, current) != current);

        if (_sendRequested.CurrentCount == 0)
        {
            try
            {
                _sendRequested.Release();
            }
            catch (SemaphoreFullException)
            {
                // Already requested by a concurrent caller: coalesced.
            }
        }
    }

    public Task<bool> WaitAsync(long untilMs, CancellationToken cancellationToken) => local.WaitAsync(untilMs, cancellationToken);

    public Task StartAsync(CancellationToken cancellationToken)
    {
        _listener = Task.Run(() => ListenAsync(_stopping.Token), CancellationToken.None);
        _sender = Task.Run(() => SendAsync(_stopping.Token), CancellationToken.None);
        return Task.CompletedTask;
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (Volatile.Read(ref _disposed) == 1)
        {
            return;
        }

        await _stopping.CancelAsync().ConfigureAwait(false);
        await Task.WhenAll(_listener, _sender).WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "A background listener: whatever ends it is logged and the node falls back to polling; letting it escape would fault an unobserved task.")]
    private async Task ListenAsync(CancellationToken stopping)
    {
        // Reconnects with capped, jittered exponential backoff (Polly). After MaxReconnects failures in a row the
        // listener gives up and the node reports itself unhealthy, so that an orchestrator replaces it.
        var failures = 0;
        var reconnect = new ResiliencePipelineBuilder { TimeProvider = time }
            .AddRetry(new RetryStrategyOptions
            {
                ShouldHandle = new PredicateBuilder().Handle<Exception>(e => e is not OperationCanceledException),
                MaxRetryAttempts = MaxReconnects,
                BackoffType = DelayBackoffType.Exponential,
                UseJitter = true,
                Delay = TimeSpan.FromMilliseconds(200),
                MaxDelay = MaxBackoff,
                OnRetry = args =>
                {
                    _listening = false;
                    ListenerProcessId = null;
                    failures++;
                    LogListenerDown(logger, args.Outcome.Exception!, failures, args.RetryDelay);
                    return default;
                },
            })
            .Build();
        try
        {
            // Each pass connects (retried by the pipeline, so the limit counts failures in a row) and listens until
            // the connection breaks; then a fresh pass starts with a fresh count.
            while (!stopping.IsCancellationRequested)
            {
                await reconnect.ExecuteAsync(ListenOnceAsync, stopping).ConfigureAwait(false);
                failures = 0;
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
        catch (Exception e)
        {
            _gaveUp = true;
            LogListenerGaveUp(logger, e, MaxReconnects);
        }
        finally
        {
            _listening = false;
        }
    }

    /// <summary>Opens a listening connection (a failure to do so throws) and holds it until it breaks or the node stops.</summary>
    private async ValueTask ListenOnceAsync(CancellationToken stopping)
    {
        await using var connection = await dataSource.OpenConnectionAsync(stopping).ConfigureAwait(false);
        connection.Notification += (_, e) =>
        {
            // Payload "<due ms>|<sender>": this node's own notifications already woke it in-process.
            var separator = e.Payload.IndexOf('|', StringComparison.Ordinal);
            if (separator >= 0 && e.Payload.AsSpan(separator + 1).SequenceEqual(_senderId))
            {
                return;
            }

            var dueText = separator >= 0 ? e.Payload.AsSpan(0, separator) : e.Payload.AsSpan();
            local.Notify(long.TryParse(dueText, NumberStyles.Integer, CultureInfo.InvariantCulture, out var due) ? due : 0);
        };
        await using (var listen = new NpgsqlCommand($"LISTEN {ChannelName}", connection))
        {
            await listen.ExecuteNonQueryAsync(stopping).ConfigureAwait(false);
        }

        ListenerProcessId = connection.ProcessID;
        if (!_listening)
        {
            _listening = true;
            LogListening(logger, connection.ProcessID);
        }

        // Anything committed while we were not listening is due now: look once.
        local.Notify(0);
        try
        {
            while (!stopping.IsCancellationRequested)
            {
                if (!await connection.WaitAsync(IdleCheck, stopping).ConfigureAwait(false))
                {
                    // Quiet for a while: prove the connection is still alive.
                    await using var ping = new NpgsqlCommand("SELECT 1", connection);
                    await ping.ExecuteScalarAsync(stopping).ConfigureAwait(false);
                }
            }
        }
        catch (Exception e) when (e is not OperationCanceledException || !stopping.IsCancellationRequested)
        {
            _listening = false;
            ListenerProcessId = null;
            LogListenerLost(logger, e);
        }
    }

    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "A background sender: a lost notification only delays other nodes until their next poll, so any failure is logged and the loop goes on.")]
    private async Task SendAsync(CancellationToken stopping)
    {
        while (!stopping.IsCancellationRequested)
        {
            try
            {
                await _sendRequested.WaitAsync(stopping).ConfigureAwait(false);
                var due = Interlocked.Exchange(ref _pendingDueMs, long.MaxValue);
                if (due == long.MaxValue)
                {
                    continue;
                }

                await using var command = dataSource.CreateCommand("SELECT pg_notify(@channel, @payload)");
                command.Parameters.AddWithValue("channel", ChannelName);
                command.Parameters.AddWithValue("payload", string.Create(CultureInfo.InvariantCulture, $"{due}|{_senderId}"));
                command.CommandTimeout = 5;
                await command.ExecuteNonQueryAsync(stopping).ConfigureAwait(false);
                Interlocked.Increment(ref _sent);
            }
            catch (OperationCanceledException) when (stopping.IsCancellationRequested)
            {
                break;
            }
            catch (Exception e)
            {
                // A lost notification only delays other nodes until their next poll.
                LogSendFailed(logger, e);
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        // Registered under three service types, so the container may dispose it more than once.
        if (Interlocked.Exchange(ref _disposed, 1) == 1)
        {
            return;
        }

        await _stopping.CancelAsync().ConfigureAwait(false);
        await Task.WhenAll(_listener, _sender).WaitAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
        _stopping.Dispose();
        _sendRequested.Dispose();
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Wake-up listener is down (failure {Failures}); running on the poll alone, reconnecting in {Backoff}")]
    private static partial void LogListenerDown(ILogger logger, Exception exception, int failures, TimeSpan backoff);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Wake-up listener lost its connection; reconnecting, and running on the poll alone meanwhile")]
    private static partial void LogListenerLost(ILogger logger, Exception exception);

    [LoggerMessage(Level = LogLevel.Information, Message = "Wake-up listener is listening on connection {ProcessId}")]
    private static partial void LogListening(ILogger logger, int processId);

    [LoggerMessage(Level = LogLevel.Critical, Message = "Wake-up listener gave up after {Attempts} failed reconnects; this node runs on its poll alone until restarted")]
    private static partial void LogListenerGaveUp(ILogger logger, Exception exception, int attempts);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Sending a wake-up notification failed; other nodes will see the signal at their next poll")]
    private static partial void LogSendFailed(ILogger logger, Exception exception);
}
