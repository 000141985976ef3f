using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 10 (expand; release 5 keeps working): the outbox of event deliveries, written in the transaction of the commit
/// that caused each event. Older releases never read or write it.
/// </summary>
[Migration(10, "Event deliveries: the transactional outbox")]
public sealed class Schema010Deliveries(MigrationTarget target) : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    protected override void Apply()
    {
        var d = target.Dialect;
        Execute.Sql($"CREATE TABLE wf_deliveries ({d.IdentityKeyColumn("wf_deliveries", "sequence")}, id {d.GuidColumn} NOT NULL, "
            + $"subscription_id {d.GuidColumn} NOT NULL, tenant {d.StringColumn(100)} NOT NULL, instance_id {d.GuidColumn} NOT NULL, "
            + $"type {d.StringColumn(100)} NOT NULL, body {d.TextColumn} NOT NULL, created_at {d.TimestampColumn} NOT NULL, "
            + $"due_at_ms {d.Int64Column} NOT NULL, status {d.StringColumn(16)} NOT NULL, attempts {d.Int32Column} NOT NULL, "
            + $"lease_owner {d.StringColumn(200)}, lease_token {d.Int64Column}, lease_until_ms {d.Int64Column}, last_status {d.Int32Column}, "
            + $"last_error {d.StringColumn(1000)}, delivered_at {d.TimestampColumn}, latency_ms {d.Int64Column})");
        Execute.Sql("CREATE UNIQUE INDEX ix_wf_deliveries_id ON wf_deliveries (id)");
        Execute.Sql("CREATE INDEX ix_wf_deliveries_status_due_at_ms ON wf_deliveries (status, due_at_ms)");
        Execute.Sql("CREATE INDEX ix_wf_deliveries_subscription_id_instance_id_sequence ON wf_deliveries (subscription_id, instance_id, sequence) "
            + "WHERE status = 'Pending'");
        Execute.Sql("CREATE INDEX ix_wf_deliveries_subscription_id_sequence ON wf_deliveries (subscription_id, sequence)");
    }
}
