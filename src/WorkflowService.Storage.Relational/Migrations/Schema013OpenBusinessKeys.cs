using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 13 (expand; release 5 keeps working): a business key is unique among a definition's open instances only, so
/// that the key of an ended instance can start a new one. The unique index moves to open instances (completed_at is
/// null until an instance ends); the index over every instance with a key stays, not unique, for the list's filter and
/// for reading an ended instance by its key. Existing rows already satisfy the narrower constraint.
/// </summary>
[Migration(13, "Business keys unique among open instances only")]
public sealed class Schema013OpenBusinessKeys : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    protected override void Apply()
    {
        // The new constraint first, so that no moment of the step leaves keys unguarded.
        Execute.Sql("CREATE UNIQUE INDEX ix_wf_instances_open_business_key ON wf_instances (tenant, definition_name, business_key) "
            + "WHERE business_key IS NOT NULL AND completed_at IS NULL");
        Execute.Sql("DROP INDEX ix_wf_instances_tenant_definition_name_business_key");
        Execute.Sql("CREATE INDEX ix_wf_instances_tenant_definition_name_business_key ON wf_instances (tenant, definition_name, business_key) "
            + "WHERE business_key IS NOT NULL");
    }
}
