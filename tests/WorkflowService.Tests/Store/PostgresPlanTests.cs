using System.Data.Common;
using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;
using WorkflowService.Storage.Relational;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Store;

/// <summary>
/// The plans PostgreSQL keeps for the hot path's statements. The service's connections prepare them (auto-prepare) and
/// may keep one generic plan for their whole life, made while the tables are small: a plan that is only cheap on an
/// empty table makes every later call pay for the table's size.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Security", "CA2100:Review SQL queries for security vulnerabilities", Justification = "The tests' own constant statements and the store's own statement.")]
public sealed class PostgresPlanTests : ServiceTest<PostgresBackend>
{
    protected override Dictionary<string, string?> Settings => new() { ["Workers:Enabled"] = "false" };

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_signal_finds_its_instance_by_key_under_a_generic_plan_made_while_the_table_was_small()
    {
        var dialect = Factory.Get<SqlDialect>();
        var source = Assert.IsType<DbDataSource>(dialect.DataSource, exactMatch: false);
        await using var connection = await source.OpenConnectionAsync(Token);
        // A fresh database: a few instances started before the writers' connections make their generic plans (the sixth
        // execution of a statement on a connection), long before autovacuum first analyzes the tables.
        var name = Definitions.Unique("plan");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        for (var n = 0; n < 20; n++)
        {
            await Api.StartAsync(name);
        }

        var insert = Rows.InsertSignalIfOpen(dialect, new SignalMessage
        {
            Id = Guid.CreateVersion7(), InstanceId = Guid.CreateVersion7(), Name = "go", PayloadJson = "{}", Status = SignalStatus.Pending,
            CreatedAt = DateTime.UtcNow,
        }, tenant: "");
        var shown = await GenericPlanAsync(connection, "signal_insert", insert);
        // The instance is read through its primary key by the id: no scan of the tenant's instances, whatever their number.
        Assert.True(shown.Contains("Index Scan using pk_wf_instances", StringComparison.Ordinal)
                    && shown.Contains("Index Cond: (id = $", StringComparison.Ordinal)
                    && !shown.Contains("ix_wf_instances", StringComparison.Ordinal), $"the plan:\n{shown}");
    }

    [Fact]
    public async Task A_later_page_of_a_ledger_or_a_history_seeks_through_its_index_in_order_without_a_sort()
    {
        await using var db = await Factory.Get<IDbContextFactory<WorkflowDbContext>>().CreateDbContextAsync(Token);
        await db.Database.OpenConnectionAsync(Token);
        // On the test's small tables a scan is the cheapest plan: with scans priced out, the plan shows whether an index can
        // serve the query's condition and order at all, as it must once a ledger or a history is long.
        await db.Database.ExecuteSqlRawAsync("SET enable_seqscan = off", Token);
        var id = Guid.CreateVersion7();

        var ledger = await ExplainAsync(RelationalWorkflowStore.SignalLedger(db, id, new SignalPosition(DateTime.UtcNow, Guid.CreateVersion7())).Take(51));
        Assert.True(ledger.Contains("Index Scan using ix_wf_signals_instance_id_created_at_id", StringComparison.Ordinal)
                    && IndexCondition(ledger).Contains("created_at >=", StringComparison.Ordinal)
                    && !ledger.Contains("Sort", StringComparison.Ordinal), $"the plan:\n{ledger}");

        var history = await ExplainAsync(RelationalWorkflowStore.HistoryRowsFrom(db, id, 40).Take(51));
        Assert.True(history.Contains("ix_wf_history_instance_id_sequence", StringComparison.Ordinal)
                    && IndexCondition(history).Contains("sequence >=", StringComparison.Ordinal)
                    && !history.Contains("Sort", StringComparison.Ordinal), $"the plan:\n{history}");
    }

    [Fact]
    public async Task Retention_finds_an_instances_deliveries_and_the_oldest_delivered_ones_through_an_index()
    {
        await using var db = await Factory.Get<IDbContextFactory<WorkflowDbContext>>().CreateDbContextAsync(Token);
        await db.Database.OpenConnectionAsync(Token);
        // Scans priced out, as above: whether an index serves the delete's condition (and its order) at all.
        await db.Database.ExecuteSqlRawAsync("SET enable_seqscan = off", Token);

        var ofInstances = await ExplainAsync(RelationalWorkflowStore.DeliveriesOf(db, [Guid.CreateVersion7(), Guid.CreateVersion7()]));
        Assert.True(ofInstances.Contains("ix_wf_deliveries_instance_id", StringComparison.Ordinal)
                    && IndexCondition(ofInstances).Contains("instance_id", StringComparison.Ordinal), $"the plan:\n{ofInstances}");

        // On an empty table a bitmap scan and a sort cost nothing either: priced out too, the plan shows whether an index
        // serves the condition and the order at all.
        await db.Database.ExecuteSqlRawAsync("SET enable_bitmapscan = off", Token);
        // The oldest first, no sort, only ids made before the cutoff: no index reads delivered_at (a settlement writes no
        // index, schema 18), and a delivery's version 7 id says when its event was made.
        var delivered = await ExplainAsync(RelationalWorkflowStore.OldestDelivered(db, DateTime.UtcNow, 200));
        Assert.True(delivered.Contains("ix_wf_deliveries_id", StringComparison.Ordinal)
                    && IndexCondition(delivered).Contains("id <", StringComparison.Ordinal)
                    && !delivered.Contains("Sort", StringComparison.Ordinal), $"the plan:\n{delivered}");
    }

    [Fact]
    public async Task The_outbox_claim_checks_each_candidates_order_by_one_seek_under_a_generic_plan_made_on_an_empty_table()
    {
        var dialect = Factory.Get<SqlDialect>();
        // On the claims' pool, as the dispatcher runs it: its sessions price table and bitmap scans out (on an empty table a
        // scan costs nothing, so the plan then shows how the order check is joined).
        var source = Assert.IsType<DbDataSource>(dialect.ClaimDataSource, exactMatch: false);
        await using var connection = await source.OpenConnectionAsync(Token);
        // The queue is empty: the plan a connection keeps from now on must not depend on it staying small. Under such a
        // plan the order check written as NOT EXISTS became an anti-join with no index condition, every pending delivery
        // compared with every other: seconds per claim at 15,000 pending, and the outbox stalled under load.
        await Execute(connection, "ANALYZE wf_deliveries");
        await Execute(connection, "ANALYZE wf_delivery_queue");
        var claim = RelationalWorkflowStore.ClaimDeliveries(dialect, "node-a", 1, 0, TimeSpan.FromSeconds(30), 100);

        var shown = await GenericPlanAsync(connection, "delivery_claim", claim);

        Assert.True(shown.Contains("SubPlan", StringComparison.Ordinal)
                    && IndexCondition(shown).Contains("subscription_id = q.subscription_id", StringComparison.Ordinal)
                    && IndexCondition(shown).Contains("instance_id = q.instance_id", StringComparison.Ordinal)
                    && !shown.Contains("Anti Join", StringComparison.Ordinal)
                    && shown.Contains("ix_wf_delivery_queue_due_at_ms_sequence", StringComparison.Ordinal)
                    // The candidates leased by seeks of their keys, not a join a plan made on an empty table would pick.
                    && IndexCondition(shown).Contains("(id = ANY (", StringComparison.Ordinal) && !shown.Contains("Join Filter", StringComparison.Ordinal)
                    // Each leased row's log row by its id.
                    && shown.Contains("ix_wf_deliveries_id", StringComparison.Ordinal) && IndexCondition(shown).Contains("(id = w.id)", StringComparison.Ordinal), $"the plan:\n{shown}");
    }

    [Fact]
    public async Task A_delivery_is_settled_through_its_id_under_a_generic_plan_made_on_an_empty_table()
    {
        var dialect = Factory.Get<SqlDialect>();
        // On the claims' pool, where settlements run (its sessions price table and bitmap scans out).
        var source = Assert.IsType<DbDataSource>(dialect.ClaimDataSource, exactMatch: false);
        await using var connection = await source.OpenConnectionAsync(Token);
        // Written with status = 'Pending', the settlement matched the partial index of pending deliveries, and the generic
        // plan read that whole index for each settlement: most of the database's time once the outbox was busy.
        await Execute(connection, "ANALYZE wf_deliveries");
        await Execute(connection, "ANALYZE wf_delivery_queue");
        var delivered = Assert.Single(RelationalWorkflowStore.Settle(dialect,
            new DeliverySettlement(Guid.CreateVersion7(), 1, Engine.Events.DeliveryStatus.Delivered, null, 200, null, DateTime.UtcNow, 3)));
        var retried = RelationalWorkflowStore.Settle(dialect,
            new DeliverySettlement(Guid.CreateVersion7(), 1, Engine.Events.DeliveryStatus.Pending, 1_000, 503, "503", null, null));

        // Delivered: the log row by its id, and its queue row by the queue's key, in one statement.
        var shown = await GenericPlanAsync(connection, "delivery_settle", delivered);
        Assert.True(shown.Contains("ix_wf_deliveries_id", StringComparison.Ordinal) && shown.Contains("pk_wf_delivery_queue", StringComparison.Ordinal)
                    && IndexCondition(shown).Contains("id = $", StringComparison.Ordinal), $"the plan:\n{shown}");

        // A retry: the log row by its id (its queue row's attempts and lease by theirs), then the queue row by the same id.
        Assert.Equal(2, retried.Count);
        var log = await GenericPlanAsync(connection, "delivery_retry_log", retried[0]);
        Assert.True(log.Contains("ix_wf_deliveries_id", StringComparison.Ordinal) && log.Contains("pk_wf_delivery_queue", StringComparison.Ordinal)
                    && !log.Contains("Seq Scan", StringComparison.Ordinal), $"the plan:\n{log}");
        var queue = await GenericPlanAsync(connection, "delivery_retry_queue", retried[1]);
        Assert.True(queue.Contains("pk_wf_delivery_queue", StringComparison.Ordinal) && IndexCondition(queue).Contains("id = $", StringComparison.Ordinal),
            $"the plan:\n{queue}");
    }

    /// <summary>
    /// The store's statement prepared on the server as the connections' auto-prepare does, its generic plan explained
    /// (PostgreSQL 15 has no EXPLAIN (GENERIC_PLAN)): the statement's text is already in PostgreSQL's positional placeholders
    /// ($1, $2, …), every value unknown.
    /// </summary>
    private static async Task<string> GenericPlanAsync(DbConnection connection, string name, SqlStatement statement)
    {
        var text = statement.Text;
        Assert.DoesNotContain("@p", text, StringComparison.Ordinal);
        await Execute(connection, "SET plan_cache_mode = force_generic_plan");
        await Execute(connection, $"PREPARE {name} AS {text}");
        var plan = new List<string>();
        await using var explain = connection.CreateCommand();
        explain.CommandText = $"EXPLAIN EXECUTE {name}({string.Join(", ", statement.Parameters.Select(_ => "NULL"))})";
        await using var reader = await explain.ExecuteReaderAsync(Token);
        while (await reader.ReadAsync(Token))
        {
            plan.Add(reader.GetString(0));
        }

        return string.Join('\n', plan);
    }

    /// <summary>The plan PostgreSQL makes for the store's query, with its parameters as the store binds them.</summary>
    private static async Task<string> ExplainAsync<T>(IQueryable<T> query)
    {
        await using var command = query.CreateDbCommand();
        command.CommandText = "EXPLAIN " + command.CommandText;
        var plan = new List<string>();
        await using var reader = await command.ExecuteReaderAsync(Token);
        while (await reader.ReadAsync(Token))
        {
            plan.Add(reader.GetString(0));
        }

        return string.Join('\n', plan);
    }

    /// <summary>The index conditions of the plan's scans: what each seeks by, as opposed to what it filters afterwards.</summary>
    private static string IndexCondition(string plan) =>
        string.Join('\n', plan.Split('\n').Where(l => l.Contains("Index Cond:", StringComparison.Ordinal)));

    private static async Task Execute(DbConnection connection, string sql)
    {
        await using var command = connection.CreateCommand();
        command.CommandText = sql;
        await command.ExecuteNonQueryAsync(Token);
    }
}
