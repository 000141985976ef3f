using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 19 (expand; release 5 never reads subscriptions): a subscription's batch size, the most events one request to
/// its receiver carries. Every subscription written before it keeps posting each event alone (1); so do rows written by
/// a node of an older build, through the default.
/// </summary>
[Migration(19, "Event subscriptions: the most events one request carries")]
public sealed class Schema019SubscriptionBatches(MigrationTarget target) : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    protected override void Apply() =>
        Execute.Sql($"ALTER TABLE wf_subscriptions ADD max_events_per_batch {target.Dialect.Int32Column} NOT NULL DEFAULT 1");
}
