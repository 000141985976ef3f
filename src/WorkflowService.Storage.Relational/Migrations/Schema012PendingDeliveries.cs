using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 12 (expand; release 5 keeps working): the outbox's claim reads pending deliveries in (due_at_ms, sequence) order
/// from a partial index of the pending ones only, so that it stops after the first claimable batch and a settled delivery
/// leaves the index instead of adding an entry to it. It replaces step 10's (status, due_at_ms) index, which nothing
/// else reads.
/// </summary>
[Migration(12, "Pending deliveries by due time, in claim order")]
public sealed class Schema012PendingDeliveries : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    // IF NOT EXISTS: an operator may build it first with CREATE INDEX CONCURRENTLY under this name (docs/upgrades.md).
    protected override void Apply()
    {
        Execute.Sql("CREATE INDEX IF NOT EXISTS ix_wf_deliveries_due_at_ms_sequence ON wf_deliveries (due_at_ms, sequence) WHERE status = 'Pending'");
        Execute.Sql("DROP INDEX IF EXISTS ix_wf_deliveries_status_due_at_ms");
    }
}
