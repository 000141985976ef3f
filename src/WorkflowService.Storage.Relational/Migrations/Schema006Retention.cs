using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 6 (expand; release 5 keeps working): the supported range in wf_schema, the index the retention job finds ended
/// instances by, an index for an instance's children, and the table of named leases (one node at a time runs a job).
/// </summary>
[Migration(6, "Retention: the supported release range, ended-instance and child indexes, job leases")]
public sealed class Schema006Retention : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    protected override void Apply()
    {
        Alter.Table("wf_schema").AddColumn("newest_version").AsInt32().NotNullable().WithDefaultValue(5);
        // Partial indexes: an open instance (no completed_at, no parent) adds no entry, so the hot path pays nothing for them.
        Execute.Sql("CREATE INDEX ix_wf_instances_completed_at ON wf_instances (completed_at) WHERE completed_at IS NOT NULL");
        Execute.Sql("CREATE INDEX ix_wf_instances_parent_instance_id ON wf_instances (parent_instance_id) WHERE parent_instance_id IS NOT NULL");
        Create.Table("wf_leases")
            .WithColumn("name").AsString(100).NotNullable().PrimaryKey("pk_wf_leases")
            .WithColumn("owner").AsString(200).NotNullable()
            .WithColumn("until_ms").AsInt64().NotNullable();
    }
}
