using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 8 (expand; release 5 keeps working): an index on an instance's signals in the ledger's order (created_at, then
/// id), so that GET /instances/{id}/signals reads a page by seeking to its position instead of sorting the whole ledger.
/// </summary>
[Migration(8, "Signal ledger index: an instance's signals in their order, for paged reads")]
public sealed class Schema008SignalLedgerIndex : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    // IF NOT EXISTS: on a large PostgreSQL table an operator may build it first with CREATE INDEX CONCURRENTLY under this
    // name (docs/upgrades.md), so that the step, which runs in a transaction, does not hold signal writes while it builds.
    protected override void Apply() =>
        Execute.Sql("CREATE INDEX IF NOT EXISTS ix_wf_signals_instance_id_created_at_id ON wf_signals (instance_id, created_at, id)");
}
