namespace WorkflowService.Storage.MongoDb;

/// <summary>
/// A group of wait points was not committed because one of them would not go in (stale, its lease lost, a repeated unique
/// key); nothing of the group was written, and <see cref="MongoGroupCommit"/> commits each of them alone.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1064:Exceptions should be public", Justification = "Thrown and caught inside the store's group commit; it never reaches a caller.")]
internal sealed class GroupNotAppliedException : Exception
{
    public GroupNotAppliedException()
        : base("a wait point of the group would not commit; each is committed alone")
    {
    }

    public GroupNotAppliedException(string message)
        : base(message)
    {
    }

    public GroupNotAppliedException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
