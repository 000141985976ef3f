using System.Data;
using FluentMigrator;
using WorkflowService.Engine.Search;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 17 (expand; release 5 keeps working): a search attribute slot keeps its index only while an attribute uses it.
/// Schema 16 indexed all 28 slots, and every instance insert and update paid for each partial index even with no
/// attribute declared (7 to 12 % of sustained throughput on PostgreSQL: docs/benchmarks/slot-indexes-2026-11-28.md).
/// The store builds a slot's index when an attribute first takes the slot, and at start-up for every slot in use.
/// </summary>
[Migration(17, "Search attributes: index only the slots in use")]
public sealed class Schema017SlotIndexesInUse : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    protected override void Apply() =>
        Execute.WithConnection((connection, transaction) =>
        {
            var inUse = new HashSet<string>(StringComparer.Ordinal);
            using (var read = connection.CreateCommand())
            {
                read.Transaction = transaction;
                read.CommandText = "SELECT DISTINCT slot FROM wf_search_attributes";
                using var reader = read.ExecuteReader();
                while (reader.Read())
                {
                    inUse.Add(reader.GetString(0));
                }
            }

            foreach (var (_, slot) in SearchSlots.All.Where(s => !inUse.Contains(s.Slot)))
            {
                using var drop = connection.CreateCommand();
                drop.Transaction = transaction;
                drop.CommandText = $"DROP INDEX IF EXISTS {SlotIndexes.Name(slot)}";
                drop.ExecuteNonQuery();
            }
        });
}
