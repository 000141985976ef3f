using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 5, the baseline: the tables of the last release before versioned migrations, as that release's model created
/// them (Baseline/schema-5.*.sql, generated from its EF Core model and never edited since). A database that release created
/// already has them and only gets the step recorded; an empty database gets them created.
/// </summary>
[Migration(5, "Baseline: the tables of the last release before versioned migrations")]
public sealed class Schema005Baseline(SqlDialect dialect) : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    protected override void Apply()
    {
    }

    public override void Up()
    {
        if (Schema.Table("wf_instances").Exists())
        {
            // The release before migrations created the tables and its wf_schema row (the migrator checked it says 5).
            return;
        }

        Execute.Sql(BaselineScript(dialect.Name));
        Execute.Sql("INSERT INTO wf_schema (id, version, applied_at) VALUES (1, 5, " + dialect.NowSql + ")");
    }

    /// <summary>The baseline tables for the store named <paramref name="store"/>, as the release before migrations created them.</summary>
    public static string BaselineScript(string store)
    {
        var name = $"WorkflowService.Storage.Relational.Migrations.Baseline.schema-5.{store}.sql";
        using var stream = typeof(Schema005Baseline).Assembly.GetManifestResourceStream(name)
            ?? throw new InvalidOperationException($"The baseline schema for {store} is not embedded ({name}).");
        using var reader = new StreamReader(stream);
        return reader.ReadToEnd();
    }
}
