using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 7 (expand; release 5 keeps working): a commit's history events in one wf_history row. The row's columns keep
/// the commit's first event as before; the new nullable more_json holds the events after it (see <see cref="HistoryRows"/>).
/// A release that does not know the column reads the first event of each row and ignores the rest.
/// </summary>
[Migration(7, "History batches: a commit's history events in one wf_history row (more_json)")]
public sealed class Schema007HistoryBatches(MigrationTarget target) : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    // A nullable column without a default: no existing row is rewritten (on PostgreSQL only the catalogue changes).
    protected override void Apply() => Execute.Sql($"ALTER TABLE wf_history ADD COLUMN more_json {target.Dialect.TextColumn} NULL");
}
