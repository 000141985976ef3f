using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 14 (expand; release 5 keeps working): schedules, a tenant's names unique, claimed by their due time. Older
/// releases never read the table.
/// </summary>
[Migration(14, "Schedules")]
public sealed class Schema014Schedules(MigrationTarget target) : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    protected override void Apply()
    {
        var d = target.Dialect;
        Execute.Sql($"CREATE TABLE wf_schedules (id {d.GuidColumn} NOT NULL, tenant {d.StringColumn(100)} NOT NULL, "
            + $"name {d.StringColumn(100)} NOT NULL, definition_name {d.StringColumn(100)} NOT NULL, definition_version {d.Int32Column}, "
            + $"input_json {d.TextColumn}, cron {d.StringColumn(200)}, time_zone {d.StringColumn(100)} NOT NULL, interval_seconds {d.Int64Column}, "
            + $"start_at {d.TimestampColumn}, end_at {d.TimestampColumn}, jitter_seconds {d.Int64Column} NOT NULL, "
            + $"business_key_template {d.StringColumn(400)} NOT NULL, overlap {d.StringColumn(16)} NOT NULL, catch_up {d.StringColumn(16)} NOT NULL, "
            + $"catch_up_window_seconds {d.Int64Column}, enabled {d.BooleanColumn} NOT NULL, paused_reason {d.StringColumn(400)}, "
            + $"next_fire_ms {d.Int64Column}, due_at_ms {d.Int64Column}, buffered_fire_ms {d.Int64Column}, last_instance_id {d.GuidColumn}, "
            + $"recent_json {d.TextColumn} NOT NULL, lease_owner {d.StringColumn(200)}, lease_until_ms {d.Int64Column}, "
            + $"lease_token {d.Int64Column} NOT NULL, created_at {d.TimestampColumn} NOT NULL, updated_at {d.TimestampColumn} NOT NULL, "
            + $"version {d.Int32Column} NOT NULL, CONSTRAINT pk_wf_schedules PRIMARY KEY (id))");
        Execute.Sql("CREATE UNIQUE INDEX ix_wf_schedules_tenant_name ON wf_schedules (tenant, name)");
        Execute.Sql("CREATE INDEX ix_wf_schedules_due_at_ms ON wf_schedules (due_at_ms)");
    }
}
