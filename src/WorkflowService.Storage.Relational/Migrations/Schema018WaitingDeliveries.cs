using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 18 (expand; release 5 never reads deliveries): the outbox's waiting deliveries in a table of their own.
/// <para>
/// wf_deliveries held both the delivery log and the queue: each delivery was written, claimed and settled in one row that
/// carries the event's body, and the claim and the settlement each wrote a new version of the whole row; the settlement
/// changed columns that indexes and their predicates read, so every version went into most of the table's seven indexes
/// (about 13 index entries and 2.8 KB of WAL per delivery on PostgreSQL: docs/benchmarks/events-wal-2026-11-29.md).
/// Now a waiting delivery also has a small row in wf_delivery_queue (its order, due time, attempts and lease), inserted with
/// it and deleted when it is delivered or dead-lettered. The claim leases that row; the settlement deletes it and updates
/// the log row, whose remaining indexes read no column a settlement changes, so the update stays on its page (HOT).
/// </para>
/// Nodes of builds between steps 10 and 17 (never released) must not share a database with this one: they read and write
/// the lease in wf_deliveries.
/// </summary>
[Migration(18, "Event deliveries: the waiting ones in a queue table apart from the delivery log")]
public sealed class Schema018WaitingDeliveries(MigrationTarget target) : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    protected override void Apply()
    {
        var d = target.Dialect;
        Execute.Sql($"CREATE TABLE wf_delivery_queue (id {d.GuidColumn} NOT NULL, subscription_id {d.GuidColumn} NOT NULL, instance_id {d.GuidColumn} NOT NULL, "
            + $"sequence {d.Int64Column} NOT NULL, due_at_ms {d.Int64Column} NOT NULL, attempts {d.Int32Column} NOT NULL, "
            + $"lease_owner {d.StringColumn(200)}, lease_token {d.Int64Column}, lease_until_ms {d.Int64Column}, "
            + "CONSTRAINT pk_wf_delivery_queue PRIMARY KEY (id))");
        Execute.Sql("CREATE INDEX ix_wf_delivery_queue_due_at_ms_sequence ON wf_delivery_queue (due_at_ms, sequence)");
        Execute.Sql("CREATE INDEX ix_wf_delivery_queue_subscription_id_instance_id_sequence ON wf_delivery_queue (subscription_id, instance_id, sequence)");
        Execute.Sql("INSERT INTO wf_delivery_queue (id, subscription_id, instance_id, sequence, due_at_ms, attempts, lease_owner, lease_token, lease_until_ms) "
            + "SELECT id, subscription_id, instance_id, sequence, due_at_ms, attempts, lease_owner, lease_token, lease_until_ms FROM wf_deliveries WHERE status = 'Pending'");
        Execute.Sql("DROP INDEX IF EXISTS ix_wf_deliveries_due_at_ms_sequence");
        Execute.Sql("DROP INDEX IF EXISTS ix_wf_deliveries_subscription_id_instance_id_sequence");
        Execute.Sql("DROP INDEX IF EXISTS ix_wf_deliveries_delivered_at");
        foreach (var column in new[] { "lease_owner", "lease_token", "lease_until_ms" })
        {
            Execute.Sql($"ALTER TABLE wf_deliveries DROP COLUMN {column}");
        }

        if (d.Name == "postgresql")
        {
            // Room on each page for a claim's new version of a row: a lease changes no indexed column, so it stays heap-only.
            Execute.Sql("ALTER TABLE wf_delivery_queue SET (fillfactor = 70)");
        }
    }
}
