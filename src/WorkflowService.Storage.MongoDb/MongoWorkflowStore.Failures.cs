using MongoDB.Driver;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>Which failures mean MongoDB is out of reach (<see cref="IStoreFailures"/>).</summary>
public sealed partial class MongoWorkflowStore : IStoreFailures
{
    /// <summary>The server's code for a write refused because its disk is full (OutOfDiskSpace).</summary>
    private const int OutOfDiskSpaceCode = 14031;

    // No primary to select (an election, every member down), a connection that broke or could not be opened, a member
    // that stepped down or is recovering, a server-side time limit, a transaction the server asks to run again.
    public bool IsUnavailable(Exception exception) => AnyInChain(exception, e =>
        e is TimeoutException or MongoConnectionException or MongoNotPrimaryException or MongoNodeIsRecoveringException
            or MongoExecutionTimeoutException
        || e is MongoCommandException { Code: OutOfDiskSpaceCode }
        || (e is MongoException mongo && mongo.HasErrorLabel("TransientTransactionError")));

    public string DescribeUnavailable(Exception exception)
    {
        Exception? found = null;
        AnyInChain(exception, e => (found = e) is TimeoutException or MongoConnectionException or MongoNotPrimaryException
            or MongoNodeIsRecoveringException or MongoExecutionTimeoutException or MongoCommandException { Code: OutOfDiskSpaceCode });
        return found switch
        {
            TimeoutException => $"no MongoDB member could be selected within Store:ServerSelectionTimeout: is the replica set up, and does it have a primary? ({found.Message.ReplaceLineEndings(" ")})",
            MongoConnectionException => $"the connection to MongoDB could not be opened or broke: {found.GetBaseException().Message}",
            MongoNotPrimaryException or MongoNodeIsRecoveringException => "the MongoDB member is not primary (an election is under way, or it is recovering)",
            MongoExecutionTimeoutException => "MongoDB did not answer within the operation's time limit",
            MongoCommandException => "MongoDB's disk is full",
            _ => exception.GetBaseException().Message,
        };
    }

    /// <summary>Whether <paramref name="exception"/> or any exception inside it matches (the driver wraps socket and timeout errors).</summary>
    private static bool AnyInChain(Exception exception, Func<Exception, bool> match)
    {
        for (var e = exception; e is not null; e = e.InnerException)
        {
            if (match(e))
            {
                return true;
            }
        }

        return false;
    }
}
