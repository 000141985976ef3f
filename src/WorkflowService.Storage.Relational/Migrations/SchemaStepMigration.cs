using System.Reflection;
using FluentMigrator;

namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// One numbered step of the relational schema, run by FluentMigrator in a transaction of its own. Steps only move
/// forward: a release never undoes one (its data may already be in use by the next release's nodes).
/// </summary>
/// <remarks>
/// Rolling upgrades rest on expand-then-contract. An expand step (new tables, columns with defaults, indexes) leaves the
/// previous release working, so nodes of both share the database during a deploy; its <see cref="OldestCompatible"/>
/// stays below its version. A contract step (dropping or renaming what an older release still reads) comes a release
/// later and raises it. The step records the range in wf_schema in the same transaction as its changes, so the range a
/// node checks at start-up is never ahead of or behind the tables.
/// </remarks>
public abstract class SchemaStepMigration : Migration
{
    /// <summary>This step's number, from its <see cref="MigrationAttribute"/>.</summary>
    public long Number => GetType().GetCustomAttribute<MigrationAttribute>()?.Version
        ?? throw new InvalidOperationException($"{GetType().Name} has no [Migration] attribute.");

    /// <summary>The oldest release schema whose nodes still work once this step is applied.</summary>
    public abstract int OldestCompatible { get; }

    /// <summary>The step's changes.</summary>
    protected abstract void Apply();

    public override void Up()
    {
        Apply();
        // wf_schema.version is the oldest release schema that may run here (it is what releases before this column read);
        // newest_version is the newest step applied.
        Execute.Sql($"UPDATE wf_schema SET newest_version = {Number}, "
            + $"version = CASE WHEN version < {OldestCompatible} THEN {OldestCompatible} ELSE version END WHERE id = 1");
    }

    public override void Down() =>
        throw new NotSupportedException("Schema steps only move forward: restore a backup to go back to an older release's schema.");
}
