using FluentMigrator;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 16 (expand; release 5 keeps working): search attributes. Every instance row gets typed slot columns (empty
/// until a definition declares attributes), each with a partial index that leads with the tenant; wf_search_attributes
/// maps a tenant's attribute names to slots. Older releases name their columns and never read these.
/// Measured against an attribute table: docs/benchmarks/search-layout-2026-11-28.md.
/// </summary>
[Migration(16, "Search attributes: typed slot columns on instances, names per tenant")]
public sealed class Schema016SearchAttributes(MigrationTarget target) : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    protected override void Apply()
    {
        var d = target.Dialect;
        Execute.Sql($"CREATE TABLE wf_search_attributes (tenant {d.StringColumn(100)} NOT NULL, name {d.StringColumn(64)} NOT NULL, "
            + $"type {d.StringColumn(16)} NOT NULL, slot {d.StringColumn(16)} NOT NULL, CONSTRAINT pk_wf_search_attributes PRIMARY KEY (tenant, name))");
        Execute.Sql("CREATE UNIQUE INDEX ix_wf_search_attributes_tenant_slot ON wf_search_attributes (tenant, slot)");
        foreach (var (type, slot) in SearchSlots.All)
        {
            Execute.Sql($"ALTER TABLE wf_instances ADD {slot} {ColumnType(d, type)}");
            // Only instances with a value are in the index; (tenant, value, id) serves a filter, a sort and its keyset seek.
            Execute.Sql($"CREATE INDEX ix_wf_instances_tenant_{slot}_id ON wf_instances (tenant, {slot}, id) WHERE {slot} IS NOT NULL");
        }
    }

    /// <summary>A slot's column type, as the EF Core model declares it (<see cref="WorkflowDbContext"/>).</summary>
    internal static string ColumnType(SqlDialect dialect, SearchValueType type) => type switch
    {
        SearchValueType.Keyword => dialect.StringColumn(SearchSlots.MaxKeywordLength),
        SearchValueType.Text => dialect.StringColumn(SearchSlots.MaxTextLength),
        SearchValueType.Number => dialect.DoubleColumn,
        SearchValueType.DateTime => dialect.TimestampColumn,
        _ => dialect.BooleanColumn,
    };
}
