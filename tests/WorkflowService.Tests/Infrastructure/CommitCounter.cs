using System.Data.Common;
using Microsoft.EntityFrameworkCore.Diagnostics;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>Counts committed database transactions, to show how many commits a workflow costs.</summary>
public sealed class CommitCounter : DbTransactionInterceptor
{
    private int _count;

    public int Count => Volatile.Read(ref _count);

    public override Task TransactionCommittedAsync(DbTransaction transaction, TransactionEndEventData eventData, CancellationToken cancellationToken = default)
    {
        Interlocked.Increment(ref _count);
        return Task.CompletedTask;
    }

    public override void TransactionCommitted(DbTransaction transaction, TransactionEndEventData eventData) => Interlocked.Increment(ref _count);
}
