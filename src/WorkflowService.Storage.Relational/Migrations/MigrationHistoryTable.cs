using FluentMigrator.Runner.VersionTableInfo;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>FluentMigrator's record of the steps applied, named like the service's other tables.</summary>
internal sealed class MigrationHistoryTable(string? schema) : IVersionTableMetaData
{
    public const string Name = "wf_migrations";

    public bool OwnsSchema => false;
    // Where the service's tables are (the connection's search path), not FluentMigrator's default "public".
    public string SchemaName => schema ?? string.Empty;
    public string TableName => Name;
    public string ColumnName => "version";
    public string DescriptionColumnName => "description";
    public string UniqueIndexName => "ux_wf_migrations_version";
    public string AppliedOnColumnName => "applied_at";
    public bool CreateWithPrimaryKey => false;
}
