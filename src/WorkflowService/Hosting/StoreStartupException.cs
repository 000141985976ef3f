namespace WorkflowService.Hosting;

/// <summary>
/// The store could not be reached or prepared at start-up (the database down or refusing this node, a file that cannot be
/// opened): the message says why in an operator's words and what to check, and the start ends with it alone.
/// </summary>
public sealed class StoreStartupException : Exception
{
    public StoreStartupException()
    {
    }

    public StoreStartupException(string message)
        : base(message)
    {
    }

    public StoreStartupException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
