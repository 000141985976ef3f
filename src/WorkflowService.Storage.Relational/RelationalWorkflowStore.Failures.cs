using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>Which failures mean the database is out of reach (<see cref="IStoreFailures"/>): the dialect knows its driver's.</summary>
public sealed partial class RelationalWorkflowStore : IStoreFailures
{
    public bool IsUnavailable(Exception exception) => dialect.IsUnavailable(exception);

    public string DescribeUnavailable(Exception exception) => dialect.DescribeUnavailable(exception);
}
