namespace WorkflowService.Engine.Persistence;

/// <summary>Tells a failure of the store being out of reach from any other, so that callers can be told to try again later.</summary>
public interface IStoreFailures
{
    /// <summary>
    /// True when <paramref name="exception"/> means the store could not be reached or did not answer in time (down,
    /// paused, every connection taken, a timeout): nothing is wrong with the request, and the same request may succeed
    /// later (safely, with its idempotency key).
    /// </summary>
    bool IsUnavailable(Exception exception);

    /// <summary>
    /// What an unavailable store's <paramref name="exception"/> means, in words an operator can act on (for the log, never
    /// for the client): "the disk is full", "is its filesystem read-only, full or failing?".
    /// </summary>
    string DescribeUnavailable(Exception exception);
}
