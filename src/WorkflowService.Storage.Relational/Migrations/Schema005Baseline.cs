using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// Schema 5, the baseline: the tables of the last release before versioned migrations, as that release's model created
/// them (Baseline/schema-5.*.sql, generated from its EF Core model and never edited since). A database that release created
/// already has them and only gets the step recorded; an empty database gets them created.
/// </summary>
[Migration(5, "Baseline: the tables of the last release before versioned migrations")]
public sealed class Schema005Baseline(MigrationTarget target) : SchemaStepMigration
{
    public override int OldestCompatible => 5;

    protected override void Apply()
    {
    }

    public override void Up()
    {
        if (!target.TablesExist)
        {
            Execute.Sql(BaselineScript(target.Dialect.Name));
        }

        // The release before migrations wrote its row after creating the tables, in a transaction of its own: a node that
        // died between the two left the tables without it.
        Execute.Sql("INSERT INTO wf_schema (id, version, applied_at) SELECT 1, 5, " + target.Dialect.NowSql
            + " WHERE NOT EXISTS (SELECT 1 FROM wf_schema WHERE id = 1)");
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
