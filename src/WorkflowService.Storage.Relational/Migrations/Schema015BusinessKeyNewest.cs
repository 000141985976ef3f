using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 15 (expand; release 5 keeps working): the index of instances with a business key gains created_at, so that
/// reading an instance by its key when it has ended (the newest with that key) is one seek from its end. Before it,
/// PostgreSQL answered that read from the (tenant, definition_name, created_at) index, reading back through every
/// newer instance of the definition: 14 ms a call under load, a third of the throughput of addressing by id.
/// IF NOT EXISTS: an operator may build it first with CREATE INDEX CONCURRENTLY under this name (docs/upgrades.md).
/// </summary>
[Migration(15, "Business keys: the newest instance with a key in one seek")]
public sealed class Schema015BusinessKeyNewest : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    protected override void Apply()
    {
        Execute.Sql("CREATE INDEX IF NOT EXISTS ix_wf_instances_tenant_definition_name_business_key_created_at "
            + "ON wf_instances (tenant, definition_name, business_key, created_at) WHERE business_key IS NOT NULL");
        Execute.Sql("DROP INDEX IF EXISTS ix_wf_instances_tenant_definition_name_business_key");
    }
}
