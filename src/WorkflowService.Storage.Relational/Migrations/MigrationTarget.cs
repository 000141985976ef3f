namespace WorkflowService.Storage.Relational.Migrations;

/// <summary>
/// What the steps are told about the database they migrate, read by the migrator before they run: its dialect, whether it
/// already holds the workflow tables (a database the release before migrations created), and the schema unqualified
/// names resolve to (PostgreSQL's search path; null on SQLite), where the runner keeps its own table.
/// </summary>
public sealed record MigrationTarget(SqlDialect Dialect, bool TablesExist, string? Schema);
