using System.Data.Common;
using System.Net.Http.Json;
using Microsoft.Data.Sqlite;
using Microsoft.EntityFrameworkCore;
using Npgsql;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Search;
using WorkflowService.Storage.Relational;
using WorkflowService.Storage.Relational.Migrations;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Store;

/// <summary>
/// The schema steps on a real database: what they build is exactly what the EF Core model describes, and a node refuses
/// a database outside the range of releases it supports, or one it may not migrate itself, with the reason and what to do;
/// the <c>schema</c> and <c>migrate</c> commands of the same binary do the operator's half.
/// </summary>
public abstract class SchemaMigrationTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    protected override bool UsesDefaultService => false;

    /// <summary>The tables' columns and indexes as the database reports them, one line each, in order.</summary>
    protected abstract Task<IReadOnlyList<string>> DescribeAsync(string connectionString);

    /// <summary>EF Core's options for the backend (to create a database from the model alone).</summary>
    protected abstract DbContextOptions<WorkflowDbContext> ModelOptions(string connectionString);

    /// <summary>Runs one statement on the database.</summary>
    protected abstract Task ExecuteAsync(string connectionString, string sql);

    /// <summary>Runs a query whose rows are one text each; returns them in ordinal order.</summary>
    protected abstract Task<IReadOnlyList<string>> QueryAsync(string connectionString, string sql);

    private static string ConnectionString(BackendDatabase database) => database.Settings["Store:ConnectionString"]!;

    /// <summary>A node's settings on <paramref name="database"/>, outside development, with an API key.</summary>
    private static Dictionary<string, string?> NodeSettings(BackendDatabase database, params (string Key, string Value)[] more)
    {
        var settings = new Dictionary<string, string?>(database.Settings);
        foreach (var (key, value) in TestApiKey.Settings(TestApiKey.Create("schema-test", "admin")))
        {
            settings[key] = value;
        }

        foreach (var (key, value) in more)
        {
            settings[key] = value;
        }

        return settings;
    }

    [Fact]
    public async Task The_steps_build_exactly_the_schema_the_model_describes()
    {
        var migrated = await CreateDatabaseAsync();
        var fromModel = await CreateDatabaseAsync();
        var migrate = await TestServiceProcess.RunUntilExitAsync(NodeSettings(migrated), "migrate");
        Assert.True(migrate.ExitCode == 0, migrate.ToString());
        await using (var db = new WorkflowDbContext(ModelOptions(ConnectionString(fromModel))))
        {
            await db.Database.EnsureCreatedAsync(TestContext.Current.CancellationToken);
        }

        var expected = await DescribeAsync(ConnectionString(fromModel));
        var actual = await DescribeAsync(ConnectionString(migrated));
        Assert.NotEmpty(expected);
        Assert.Equal(expected, actual);
    }

    [Fact]
    public async Task The_schema_and_migrate_commands_show_and_apply_the_steps_a_node_that_may_not_migrate_refuses()
    {
        var database = await CreateDatabaseAsync();
        var settings = NodeSettings(database, ("Store:ApplyMigrationsAtStartup", "false"));

        var before = await TestServiceProcess.RunUntilExitAsync(settings, "schema");
        Assert.True(before.ExitCode == 0, before.ToString());
        Assert.Contains("database schema: none (an empty database)", before.Output, StringComparison.Ordinal);
        Assert.All(SchemaMigrator.Steps, s => Assert.Contains($"pending {s.Version}: {s.Description}", before.Output, StringComparison.Ordinal));

        var refused = await TestServiceProcess.RunUntilExitAsync(settings);
        Assert.Equal(1, refused.ExitCode);
        Assert.Contains("does not migrate at start-up (Store:ApplyMigrationsAtStartup is false). Run `WorkflowService migrate`",
            refused.Error, StringComparison.Ordinal);
        Assert.Single(refused.Error.Trim().Split('\n'));

        var migrate = await TestServiceProcess.RunUntilExitAsync(settings, "migrate");
        Assert.True(migrate.ExitCode == 0, migrate.ToString());
        Assert.Contains($"database schema: {SchemaMigrator.Current}, supporting releases of schema 5 to {SchemaMigrator.Current}",
            migrate.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("pending", migrate.Output, StringComparison.Ordinal);

        // Now the node starts without migrating, and the API tells the same.
        await using var node = await TestServiceProcess.StartAsync("after-migrate",
            new Dictionary<string, string?>(database.Settings) { ["Store:ApplyMigrationsAtStartup"] = "false" });
        using var client = node.CreateClient();
        var status = (await client.GetFromJsonAsync<SchemaStatus>("/admin/schema", WorkflowServiceFactory.Json))!;
        Assert.True(status.NodeSupported);
        Assert.Equal(SchemaMigrator.Steps.Select(s => s.Version), status.Applied.Select(s => s.Version));
        Assert.All(status.Applied, s => Assert.NotNull(s.AppliedAt));
    }

    [Fact]
    public async Task A_search_slot_has_an_index_only_while_an_attribute_uses_it_and_a_node_rebuilds_a_missing_one()
    {
        var database = await CreateDatabaseAsync();
        var connectionString = ConnectionString(database);
        const string definition = """
            {
              "name": "slot-indexes",
              "searchAttributes": {
                "customer": { "type": "keyword", "value": "input.customer ?? null" },
                "amount": { "type": "number", "value": "input.amount ?? null" }
              },
              "steps": [ { "id": "wait", "type": "waitForSignal", "signal": "go" }, { "id": "end", "type": "complete" } ]
            }
            """;
        await using (var node = await TestServiceProcess.StartAsync("slot-indexes", new Dictionary<string, string?>(database.Settings)))
        {
            // Migrated: no slot is in use, so no slot index makes an instance write dearer.
            Assert.Empty(await SlotIndexesAsync(connectionString));

            using var client = node.CreateClient();
            await new ApiClient(client).PublishAsync(definition);
            Assert.Equal(["ix_wf_instances_tenant_kw01_id", "ix_wf_instances_tenant_num01_id"], await SlotIndexesAsync(connectionString));
        }

        // As a build that failed leaves it: the next node to start builds the index again.
        await ExecuteAsync(connectionString, "DROP INDEX ix_wf_instances_tenant_kw01_id");
        await using (var node = await TestServiceProcess.StartAsync("slot-indexes-again", new Dictionary<string, string?>(database.Settings)))
        {
            Assert.Equal(["ix_wf_instances_tenant_kw01_id", "ix_wf_instances_tenant_num01_id"], await SlotIndexesAsync(connectionString));
        }
    }

    [Fact]
    public async Task Where_only_migrate_changes_the_schema_a_new_attributes_index_is_built_by_migrate()
    {
        var database = await CreateDatabaseAsync();
        var connectionString = ConnectionString(database);
        var settings = NodeSettings(database, ("Store:ApplyMigrationsAtStartup", "false"));
        Assert.Equal(0, (await TestServiceProcess.RunUntilExitAsync(settings, "migrate")).ExitCode);
        await using (var node = await TestServiceProcess.StartAsync("slot-indexes-no-ddl",
            new Dictionary<string, string?>(database.Settings) { ["Store:ApplyMigrationsAtStartup"] = "false" }))
        {
            using var client = node.CreateClient();
            await new ApiClient(client).PublishAsync("""
                {
                  "name": "slot-indexes",
                  "searchAttributes": { "customer": { "type": "keyword", "value": "input.customer ?? null" } },
                  "steps": [ { "id": "wait", "type": "waitForSignal", "signal": "go" }, { "id": "end", "type": "complete" } ]
                }
                """);
            // The node may not change the schema: the attribute is declared and searchable, without its index yet.
            Assert.Empty(await SlotIndexesAsync(connectionString));
        }

        // The operator sees what is missing, and what builds it.
        var schema = await TestServiceProcess.RunUntilExitAsync(settings, "schema");
        Assert.True(schema.ExitCode == 0, schema.ToString());
        Assert.Contains("missing index ix_wf_instances_tenant_kw01_id (built by migrate)", schema.Output, StringComparison.Ordinal);

        var migrate = await TestServiceProcess.RunUntilExitAsync(settings, "migrate");
        Assert.True(migrate.ExitCode == 0, migrate.ToString());
        Assert.Equal(["ix_wf_instances_tenant_kw01_id"], await SlotIndexesAsync(connectionString));
        Assert.DoesNotContain("missing index", migrate.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Step_18_moves_the_waiting_deliveries_with_their_attempts_and_leases_into_the_queue()
    {
        var database = await CreateDatabaseAsync();
        var connectionString = ConnectionString(database);
        var settings = NodeSettings(database);
        Assert.Equal(0, (await TestServiceProcess.RunUntilExitAsync(settings, "migrate")).ExitCode);
        // The database as step 17 left it: each delivery's lease in its log row, no queue; step 18 pending.
        const string leased = "0193a7a0-0000-7000-8000-000000000001", retrying = "0193a7a0-0000-7000-8000-000000000002";
        const string delivered = "0193a7a0-0000-7000-8000-000000000003", dead = "0193a7a0-0000-7000-8000-000000000004";
        string[] back =
        [
            "DROP TABLE wf_delivery_queue",
            "ALTER TABLE wf_deliveries ADD COLUMN lease_owner varchar(200)",
            "ALTER TABLE wf_deliveries ADD COLUMN lease_token bigint",
            "ALTER TABLE wf_deliveries ADD COLUMN lease_until_ms bigint",
            "DELETE FROM wf_migrations WHERE version = 18",
            "UPDATE wf_schema SET newest_version = 17 WHERE id = 1",
        ];
        foreach (var sql in back)
        {
            await ExecuteAsync(connectionString, sql);
        }

        foreach (var (id, status, attempts, owner, token, due) in new[]
        {
            (leased, "Pending", 2, "'node-a'", "7", 100), (retrying, "Pending", 1, "NULL", "NULL", 123),
            (delivered, "Delivered", 1, "NULL", "NULL", 50), (dead, "DeadLettered", 5, "NULL", "NULL", 60),
        })
        {
            await ExecuteAsync(connectionString, "INSERT INTO wf_deliveries (id, subscription_id, tenant, instance_id, type, body, created_at, due_at_ms, "
                + $"status, attempts, lease_owner, lease_token, lease_until_ms) VALUES ('{id}', '0193a7a0-0000-7000-8000-0000000000aa', '', "
                + $"'0193a7a0-0000-7000-8000-0000000000bb', 'instance.started', '{{}}', '2026-11-29 00:00:00+00', {due}, '{status}', {attempts}, "
                + $"{owner}, {token}, {(owner == "NULL" ? "NULL" : "9999999999999")})");
        }

        var migrate = await TestServiceProcess.RunUntilExitAsync(settings, "migrate");

        Assert.True(migrate.ExitCode == 0, migrate.ToString());
        // The waiting ones wait in the queue as they were, leased or not; the settled ones stay in the log only.
        Assert.Equal(
            [$"{leased} 2 node-a 7 100", $"{retrying} 1 - 0 123"],
            await QueryAsync(connectionString, "SELECT CAST(id AS varchar(36)) || ' ' || CAST(attempts AS varchar(10)) || ' ' || COALESCE(lease_owner, '-') || ' ' "
                + "|| CAST(COALESCE(lease_token, 0) AS varchar(20)) || ' ' || CAST(due_at_ms AS varchar(20)) FROM wf_delivery_queue"));
        Assert.Equal(["4"], await QueryAsync(connectionString, "SELECT CAST(COUNT(*) AS varchar(10)) FROM wf_deliveries"));
        Assert.Equal(await DescribeAsync(ConnectionString(await ModelDatabaseAsync())), await DescribeAsync(connectionString));
    }

    /// <summary>A database created from the EF Core model alone.</summary>
    private async Task<BackendDatabase> ModelDatabaseAsync()
    {
        var fromModel = await CreateDatabaseAsync();
        await using var db = new WorkflowDbContext(ModelOptions(ConnectionString(fromModel)));
        await db.Database.EnsureCreatedAsync(TestContext.Current.CancellationToken);
        return fromModel;
    }

    /// <summary>The names of the search slots' indexes the database holds, in order.</summary>
    private async Task<IReadOnlyList<string>> SlotIndexesAsync(string connectionString) =>
        (await DescribeAsync(connectionString))
            .Select(line => line.Split(' ', ':')[0])
            .Where(name => SearchSlots.All.Any(s => name == $"ix_wf_instances_tenant_{s.Slot}_id"))
            .Order(StringComparer.Ordinal).ToList();

    [Fact]
    public async Task A_node_older_than_the_releases_the_database_supports_refuses_to_start_with_one_line()
    {
        var database = await CreateDatabaseAsync();
        var settings = NodeSettings(database);
        Assert.Equal(0, (await TestServiceProcess.RunUntilExitAsync(settings, "migrate")).ExitCode);
        // As a later release's contract step leaves it: releases before schema 99 no longer work on this database.
        await ExecuteAsync(ConnectionString(database), "UPDATE wf_schema SET version = 99, newest_version = 100");

        var refused = await TestServiceProcess.RunUntilExitAsync(settings);

        Assert.Equal(1, refused.ExitCode);
        Assert.Equal(
            $"This node's release (schema {SchemaMigrator.Current}) is older than the releases the {StoreName} database supports "
            + "(schemas 99 to 100): deploy a release of schema 99 or newer.",
            refused.Error.Trim());
    }

    [Fact]
    public async Task Tables_from_a_build_before_schema_versioning_are_refused_not_migrated()
    {
        var database = await CreateDatabaseAsync();
        await ExecuteAsync(ConnectionString(database), "CREATE TABLE wf_instances (id integer PRIMARY KEY)");

        var refused = await TestServiceProcess.RunUntilExitAsync(NodeSettings(database));

        Assert.Equal(1, refused.ExitCode);
        Assert.StartsWith($"The {StoreName} database holds workflow tables from a build older than schema versioning", refused.Error.Trim(),
            StringComparison.Ordinal);
    }

    /// <summary>The store's name in messages.</summary>
    protected abstract string StoreName { get; }
}

[System.Diagnostics.CodeAnalysis.SuppressMessage("Security", "CA2100:Review SQL queries for security vulnerabilities", Justification = "The tests' own constant statements.")]
public sealed class SqliteSchemaMigrationTests : SchemaMigrationTests<SqliteBackend>
{
    protected override string StoreName => "sqlite";

    protected override DbContextOptions<WorkflowDbContext> ModelOptions(string connectionString) =>
        new DbContextOptionsBuilder<WorkflowDbContext>().UseSqlite(connectionString).Options;

    protected override async Task ExecuteAsync(string connectionString, string sql)
    {
        await using var connection = new SqliteConnection(connectionString);
        await connection.OpenAsync();
        await using var command = connection.CreateCommand();
        command.CommandText = sql;
        await command.ExecuteNonQueryAsync();
    }

    protected override async Task<IReadOnlyList<string>> QueryAsync(string connectionString, string sql)
    {
        await using var connection = new SqliteConnection(connectionString);
        await connection.OpenAsync();
        return await LinesAsync(connection, sql);
    }

    protected override async Task<IReadOnlyList<string>> DescribeAsync(string connectionString)
    {
        await using var connection = new SqliteConnection(connectionString);
        await connection.OpenAsync();
        return
        [
            .. await LinesAsync(connection, """
                SELECT m.name || '.' || p.name || ' ' || p.type || (CASE WHEN p."notnull" THEN ' not null' ELSE '' END) || (CASE WHEN p.pk > 0 THEN ' pk' ELSE '' END)
                  FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p
                 WHERE m.type = 'table' AND m.name LIKE 'wf\_%' ESCAPE '\' AND m.name <> 'wf_migrations'
                """),
            .. await LinesAsync(connection, """
                SELECT m.name || ' on ' || m.tbl_name || ' (' || (SELECT group_concat(i.name, ', ') FROM pragma_index_info(m.name) AS i) || ')'
                       || (CASE WHEN l."unique" THEN ' unique' ELSE '' END) || (CASE WHEN l.partial THEN ' partial' ELSE '' END)
                  FROM sqlite_master AS m JOIN pragma_index_list(m.tbl_name) AS l ON l.name = m.name
                 WHERE m.type = 'index' AND m.tbl_name LIKE 'wf\_%' ESCAPE '\' AND m.tbl_name <> 'wf_migrations'
                """),
        ];
    }

    private static async Task<IReadOnlyList<string>> LinesAsync(DbConnection connection, string sql)
    {
        await using var command = connection.CreateCommand();
        command.CommandText = sql;
        var lines = new List<string>();
        await using var reader = await command.ExecuteReaderAsync();
        while (await reader.ReadAsync())
        {
            lines.Add(reader.GetString(0));
        }

        return lines.Order(StringComparer.Ordinal).ToList();
    }
}

[System.Diagnostics.CodeAnalysis.SuppressMessage("Security", "CA2100:Review SQL queries for security vulnerabilities", Justification = "The tests' own constant statements.")]
public sealed class PostgresSchemaMigrationTests : SchemaMigrationTests<PostgresBackend>
{
    protected override string StoreName => "postgresql";

    protected override DbContextOptions<WorkflowDbContext> ModelOptions(string connectionString) =>
        new DbContextOptionsBuilder<WorkflowDbContext>().UseNpgsql(connectionString).Options;

    protected override async Task ExecuteAsync(string connectionString, string sql)
    {
        await using var connection = new NpgsqlConnection(connectionString);
        await connection.OpenAsync();
        await using var command = new NpgsqlCommand(sql, connection);
        await command.ExecuteNonQueryAsync();
    }

    protected override async Task<IReadOnlyList<string>> QueryAsync(string connectionString, string sql)
    {
        await using var connection = new NpgsqlConnection(connectionString);
        await connection.OpenAsync();
        await using var command = new NpgsqlCommand(sql, connection);
        await using var reader = await command.ExecuteReaderAsync();
        var lines = new List<string>();
        while (await reader.ReadAsync())
        {
            lines.Add(reader.GetString(0));
        }

        return lines.Order(StringComparer.Ordinal).ToList();
    }

    protected override async Task<IReadOnlyList<string>> DescribeAsync(string connectionString)
    {
        await using var connection = new NpgsqlConnection(connectionString);
        await connection.OpenAsync();
        var lines = new List<string>();
        foreach (var sql in new[]
        {
            """
            SELECT table_name || '.' || column_name || ' ' || data_type || coalesce('(' || character_maximum_length || ')', '')
                   || (CASE WHEN is_nullable = 'NO' THEN ' not null' ELSE '' END)
              FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name LIKE 'wf\_%' AND table_name <> 'wf_migrations'
            """,
            "SELECT indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename LIKE 'wf\\_%' AND tablename <> 'wf_migrations'",
        })
        {
            await using var command = new NpgsqlCommand(sql, connection);
            await using var reader = await command.ExecuteReaderAsync();
            while (await reader.ReadAsync())
            {
                lines.Add(reader.GetString(0));
            }
        }

        return lines.Order(StringComparer.Ordinal).ToList();
    }
}
