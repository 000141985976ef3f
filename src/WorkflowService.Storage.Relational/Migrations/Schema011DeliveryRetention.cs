using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 11 (expand; release 5 keeps working): the indexes retention deletes deliveries by, so that neither scans
/// wf_deliveries: an instance's deliveries (purged with it), and delivered ones by delivery time (kept for
/// Retention:DeliveredEvents).
/// </summary>
[Migration(11, "Delivery retention indexes: by instance, and delivered ones by time")]
public sealed class Schema011DeliveryRetention : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    // IF NOT EXISTS: on a large PostgreSQL table an operator may build them first with CREATE INDEX CONCURRENTLY under
    // these names (docs/upgrades.md), so that the step, which runs in a transaction, does not hold commits while it builds.
    protected override void Apply()
    {
        Execute.Sql("CREATE INDEX IF NOT EXISTS ix_wf_deliveries_instance_id ON wf_deliveries (instance_id)");
        Execute.Sql("CREATE INDEX IF NOT EXISTS ix_wf_deliveries_status_delivered_at ON wf_deliveries (status, delivered_at)");
    }
}
