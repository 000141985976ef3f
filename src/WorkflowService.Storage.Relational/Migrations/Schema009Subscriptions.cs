using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 9 (expand; release 5 keeps working): event subscriptions, a tenant's names unique. Older releases never read
/// the table.
/// </summary>
[Migration(9, "Event subscriptions")]
public sealed class Schema009Subscriptions(MigrationTarget target) : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    protected override void Apply()
    {
        var d = target.Dialect;
        Execute.Sql($"CREATE TABLE wf_subscriptions (id {d.GuidColumn} NOT NULL, tenant {d.StringColumn(100)} NOT NULL, "
            + $"name {d.StringColumn(100)} NOT NULL, endpoint {d.StringColumn(2000)} NOT NULL, events_json {d.TextColumn} NOT NULL, "
            + $"definitions_json {d.TextColumn} NOT NULL, enabled {d.BooleanColumn} NOT NULL, paused_reason {d.StringColumn(400)}, "
            + $"secret {d.StringColumn(200)} NOT NULL, previous_secret {d.StringColumn(200)}, "
            + $"previous_secret_expires_at {d.TimestampColumn}, created_at {d.TimestampColumn} NOT NULL, "
            + $"updated_at {d.TimestampColumn} NOT NULL, version {d.Int32Column} NOT NULL, CONSTRAINT pk_wf_subscriptions PRIMARY KEY (id))");
        Execute.Sql("CREATE UNIQUE INDEX ix_wf_subscriptions_tenant_name ON wf_subscriptions (tenant, name)");
    }
}
