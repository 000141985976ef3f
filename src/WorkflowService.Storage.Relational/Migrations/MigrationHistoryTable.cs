using FluentMigrator.Runner.VersionTableInfo;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>FluentMigrator's record of the steps applied, named like the service's other tables.</summary>
internal sealed class MigrationHistoryTable : IVersionTableMetaData
{
    public const string Name = "wf_migrations";

    public bool OwnsSchema => false;
    public string SchemaName => string.Empty;
    public string TableName => Name;
    public string ColumnName => "version";
    public string DescriptionColumnName => "description";
    public string UniqueIndexName => "ux_wf_migrations_version";
    public string AppliedOnColumnName => "applied_at";
    public bool CreateWithPrimaryKey => false;
}
