using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// Keeps this node's claims from expiring while their work runs longer than a lease (a slow call-out, a long queue of one
/// instance's signals): every quarter lease it extends each claim held for a quarter lease or more since its claim or its
/// last extension. Without it, a handler slower than the lease is claimed again by another worker, whose call is slow
/// too, and so on without end. Work that ends within a quarter lease (nearly all of it) costs one dictionary entry.
/// A claim whose extension finds it lost is dropped: its commit will be refused by its lease token.
/// </summary>
public sealed partial class LeaseKeeper(ISignalQueue signals, TimeProvider time, IOptions<WorkerOptions> options, ILogger<LeaseKeeper> logger)
{
    private readonly ConcurrentDictionary<Guid, Claim> _held = new();

    /// <summary>A claimed signal this node works on from now until <see cref="Release"/>.</summary>
    public void Hold(SignalMessage signal) => _held[signal.Id] = new Claim(signal.LeaseToken, time.GetTimestamp());

    /// <summary>
    /// The signal's work under this claim has ended (committed, given back, or failed: its lease then expires by itself).
    /// A later claim of the same signal (another token) is left alone.
    /// </summary>
    public void Release(SignalMessage signal)
    {
        if (_held.TryGetValue(signal.Id, out var claim) && claim.Token == signal.LeaseToken)
        {
            _held.TryRemove(new KeyValuePair<Guid, Claim>(signal.Id, claim));
        }
    }

    /// <summary>How many claims are held now.</summary>
    public int Held => _held.Count;

    /// <summary>Extends the held claims until <paramref name="stoppingToken"/> is cancelled.</summary>
    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "A store failure is logged and the claim tried again at the next tick (it has a quarter lease of margin left); the keeper must not stop.")]
    public async Task RunAsync(CancellationToken stoppingToken)
    {
        var lease = options.Value.LeaseDuration;
        var every = lease / 4;
        using var timer = new PeriodicTimer(every, time);
        try
        {
            while (await timer.WaitForNextTickAsync(stoppingToken).ConfigureAwait(false))
            {
                foreach (var (id, claim) in _held)
                {
                    if (time.GetElapsedTime(claim.Since) < every)
                    {
                        continue;
                    }

                    try
                    {
                        var renewed = time.GetTimestamp();
                        if (await signals.ExtendLeaseAsync(id, claim.Token, lease, stoppingToken).ConfigureAwait(false))
                        {
                            // Only if the work has not ended meanwhile (or been claimed again, with a new token).
                            _held.TryUpdate(id, claim with { Since = renewed }, claim);
                        }
                        else if (_held.TryRemove(new KeyValuePair<Guid, Claim>(id, claim)))
                        {
                            // Still held by its work (not settled meanwhile): another claim has taken it.
                            LogLost(logger, id);
                        }
                    }
                    catch (Exception e) when (e is not OperationCanceledException || !stoppingToken.IsCancellationRequested)
                    {
                        LogExtendFailed(logger, e, id);
                    }
                }
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
        }
    }

    /// <summary>A held claim: its lease token and when it was claimed or last extended (a timestamp).</summary>
    private readonly record struct Claim(long Token, long Since);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Lease on signal {SignalId} was lost while its work ran; another worker owns it now")]
    private static partial void LogLost(ILogger logger, Guid signalId);

    [LoggerMessage(Level = LogLevel.Error, Message = "Extending the lease on signal {SignalId} failed; trying again at the next tick")]
    private static partial void LogExtendFailed(ILogger logger, Exception exception, Guid signalId);
}
