using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 12 (expand; release 5 keeps working): fewer index writes per event. Each delivery is written once, claimed once
/// and settled once; every new row version of it went into every index of wf_deliveries. Now the claim reads pending
/// deliveries in (due_at_ms, sequence) order from a partial index of the pending ones (it stops at a batch; a settled
/// delivery leaves it), retention finds delivered ones in a partial index of the delivered ones only, and on PostgreSQL
/// the table keeps room on each page (fillfactor 70) so that a claim, which changes no indexed column, is a heap-only
/// update that writes no index at all. They replace step 10's (status, due_at_ms) and step 11's (status, delivered_at).
/// </summary>
[Migration(12, "Fewer index writes per event: partial indexes of waiting and delivered events")]
public sealed class Schema012PendingDeliveries(MigrationTarget target) : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    // IF NOT EXISTS: an operator may build them first with CREATE INDEX CONCURRENTLY under these names (docs/upgrades.md).
    protected override void Apply()
    {
        Execute.Sql("CREATE INDEX IF NOT EXISTS ix_wf_deliveries_due_at_ms_sequence ON wf_deliveries (due_at_ms, sequence) WHERE status = 'Pending'");
        Execute.Sql("CREATE INDEX IF NOT EXISTS ix_wf_deliveries_delivered_at ON wf_deliveries (delivered_at) WHERE status = 'Delivered'");
        Execute.Sql("DROP INDEX IF EXISTS ix_wf_deliveries_status_due_at_ms");
        Execute.Sql("DROP INDEX IF EXISTS ix_wf_deliveries_status_delivered_at");
        if (target.Dialect.Name == "postgresql")
        {
            // New pages only; existing ones get the room as they are rewritten (VACUUM FULL, or never: they are mostly settled).
            Execute.Sql("ALTER TABLE wf_deliveries SET (fillfactor = 70)");
        }
    }
}
