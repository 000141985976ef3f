using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 6 (expand; release 5 keeps working): the supported range in wf_schema, the index the retention job finds ended
/// instances by, an index for an instance's children, and the table of named leases (one node at a time runs a job).
/// </summary>
[Migration(6, "Retention: the supported release range, ended-instance and child indexes, job leases")]
public sealed class Schema006Retention(MigrationTarget target) : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    protected override void Apply()
    {
        // Plain SQL, unqualified like the service's own: the tables are wherever the connection's search path puts them.
        var dialect = target.Dialect;
        Execute.Sql("ALTER TABLE wf_schema ADD COLUMN newest_version integer NOT NULL DEFAULT 5");
        // Partial indexes: an open instance (no completed_at, no parent) adds no entry, so the hot path pays nothing for them.
        Execute.Sql("CREATE INDEX ix_wf_instances_completed_at ON wf_instances (completed_at) WHERE completed_at IS NOT NULL");
        Execute.Sql("CREATE INDEX ix_wf_instances_parent_instance_id ON wf_instances (parent_instance_id) WHERE parent_instance_id IS NOT NULL");
        Execute.Sql($"CREATE TABLE wf_leases (name {dialect.StringColumn(100)} NOT NULL, owner {dialect.StringColumn(200)} NOT NULL, "
            + $"until_ms {dialect.Int64Column} NOT NULL, CONSTRAINT pk_wf_leases PRIMARY KEY (name))");
    }
}
