namespace WorkflowService.Engine.Events;

/// <summary>
/// Tells this node's <see cref="EventDispatcher"/> that deliveries were written here, so it looks at once instead of at
/// its next poll. Rings coalesce: many rings while it works wake it once.
/// </summary>
public sealed class DeliveryDoorbell : IDisposable
{
    private readonly SemaphoreSlim _rung = new(0, 1);

    public void Ring()
    {
        if (_rung.CurrentCount == 0)
        {
            try
            {
                _rung.Release();
            }
            catch (SemaphoreFullException)
            {
                // Rung already.
            }
        }
    }

    /// <summary>Whether it rang since the last wait (and takes that ring): deliveries were written meanwhile.</summary>
    public bool TryTakeRing() => _rung.Wait(0);

    /// <summary>Until it rings (true) or <paramref name="wait"/> passes on <paramref name="time"/> (false).</summary>
    public async Task<bool> WaitAsync(TimeSpan wait, TimeProvider time, CancellationToken cancellationToken)
    {
        using var timeout = new CancellationTokenSource(wait, time);
        using var either = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token, cancellationToken);
        try
        {
            await _rung.WaitAsync(either.Token).ConfigureAwait(false);
            return true;
        }
        catch (OperationCanceledException) when (timeout.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            return false;
        }
    }

    public void Dispose() => _rung.Dispose();
}
