using System.Threading.Channels;

namespace WorkflowService.Engine.Schedules;

/// <summary>
/// Tells this node's <see cref="ScheduleRunner"/> that a schedule changed here, so it looks at once instead of at its
/// next poll. Rings coalesce (a channel of one that drops the rest). Other nodes learn of the change at their poll: a
/// wake-up is a hint, the store the truth.
/// </summary>
public sealed class ScheduleDoorbell
{
    private readonly Channel<bool> _rings = Channel.CreateBounded<bool>(new BoundedChannelOptions(1) { FullMode = BoundedChannelFullMode.DropWrite });

    public void Ring() => _rings.Writer.TryWrite(true);

    /// <summary>Until it rings or <paramref name="wait"/> passes on <paramref name="time"/>.</summary>
    public async Task WaitAsync(TimeSpan wait, TimeProvider time, CancellationToken cancellationToken)
    {
        using var timeout = new CancellationTokenSource(wait, time);
        using var either = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token, cancellationToken);
        try
        {
            await _rings.Reader.ReadAsync(either.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (timeout.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
        }
    }
}
