using System.Data.Common;
using System.Diagnostics;
using System.Globalization;
using System.Text;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;
using WorkflowService.Storage.Relational;

namespace WorkflowService.RunnerBackends;

/// <summary>
/// The search benchmark's direct access to a relational run's store: instances with search attribute values seeded in
/// bulk (set-based, copies of one instance the API made), and the plan of the statement the store runs for a filter, as
/// the store's own <see cref="SearchSql"/> writes it.
/// </summary>
internal sealed class SearchStore(SqlDialect dialect, DbConnection connection, Func<ValueTask> release) : IAsyncDisposable
{
    /// <summary>Seconds from 1970 to 2026-01-01T00:00:00Z: every seeded time falls within 2026.</summary>
    private const long Year2026 = 1_767_225_600;

    private const long SecondsInYear = 31_536_000;

    private const int SeedBatch = 100_000;

    private bool IsSqlite => dialect.Name == "sqlite";

    /// <summary>The tenant of the seeded instances (the template's), whose attributes the plans read.</summary>
    private string _tenant = "";

    /// <summary>
    /// Stores <paramref name="count"/> copies of the instance with business key <paramref name="templateKey"/>, each with its
    /// own id, business key, status, creation time and the three attributes' values (region skewed over five values, amount
    /// 0 to 20,000, submittedAt within 2026), then refreshes the planner's statistics; says how.
    /// </summary>
    public async Task<string> SeedAsync(string templateKey, int count, (string Region, string Amount, string SubmittedAt) attributes,
        CancellationToken cancellationToken)
    {
        var tenant = await ScalarAsync(new SqlStatement(dialect).Sql("SELECT tenant FROM wf_instances WHERE business_key = ").Param(templateKey), cancellationToken)
            ?? throw new InvalidOperationException($"no instance has business key {templateKey}: the API-made template is missing");
        _tenant = (string)tenant;
        var declared = await DeclaredAsync(_tenant, cancellationToken);
        var varied = new Dictionary<string, string>(StringComparer.Ordinal)
        {
            ["id"] = IsSqlite ? "printf('5EED0000-0000-7000-8000-%012X', n)" : "('5eed0000-0000-7000-8000-' || lpad(to_hex(n), 12, '0'))::uuid",
            ["business_key"] = "'claim-' || n",
            // 10 % running, 30 % waiting, 60 % completed.
            ["status"] = "CASE WHEN (n * 31) % 10 = 0 THEN 'Running' WHEN (n * 31) % 10 < 4 THEN 'Waiting' ELSE 'Completed' END",
            ["created_at"] = Time("(n * 48271) % " + SecondsInYear),
            ["updated_at"] = Time("(n * 48271) % " + SecondsInYear),
            // EU 40 %, US 25 %, UK 15 %, APAC 12 %, LATAM 8 %.
            [declared[attributes.Region].Slot] =
                "CASE WHEN (n * 7919) % 100 < 40 THEN 'EU' WHEN (n * 7919) % 100 < 65 THEN 'US' WHEN (n * 7919) % 100 < 80 THEN 'UK' WHEN (n * 7919) % 100 < 92 THEN 'APAC' ELSE 'LATAM' END",
            [declared[attributes.Amount].Slot] = "((n * 104729) % 2000001) / 100.0",
            [declared[attributes.SubmittedAt].Slot] = Time("(n * 69621) % " + SecondsInYear),
        };
        var columns = await ColumnsAsync(cancellationToken);
        var select = string.Join(", ", columns.Select(c => varied.TryGetValue(c, out var expression) ? expression : "t." + c));
        var clock = Stopwatch.StartNew();
        for (var lo = 1; lo <= count; lo += SeedBatch)
        {
            var hi = Math.Min(count, lo + SeedBatch - 1);
            var insert = new SqlStatement(dialect);
            if (IsSqlite)
            {
                insert.Sql("WITH RECURSIVE g(n) AS (SELECT ").Param(lo).Sql(" UNION ALL SELECT n + 1 FROM g WHERE n < ").Param(hi).Sql(") ");
            }

            insert.Sql($"INSERT INTO wf_instances ({string.Join(", ", columns)}) SELECT {select} FROM ");
            _ = IsSqlite
                ? insert.Sql("g")
                : insert.Sql("generate_series(").Param((long)lo).Sql("::bigint, ").Param((long)hi).Sql("::bigint) AS g(n)");
            insert.Sql(" CROSS JOIN wf_instances t WHERE t.business_key = ").Param(templateKey);
            await ExecuteAsync(insert, cancellationToken);
            Console.WriteLine($"    seeded {hi:N0}/{count:N0} instances ({clock.Elapsed.TotalSeconds:F0} s)");
        }

        var seeded = clock.Elapsed;
        // PostgreSQL: VACUUM as well, so that the visibility map lets counts read the index alone, as autovacuum would have.
        await ExecuteAsync(new SqlStatement(dialect).Sql(IsSqlite ? "ANALYZE" : "VACUUM ANALYZE wf_instances"), cancellationToken);
        return string.Create(CultureInfo.InvariantCulture,
            $"{count:N0} copies of an API-made claim-search instance, inserted with INSERT … SELECT over {(IsSqlite ? "a recursive series" : "generate_series")} in statements of {SeedBatch:N0} in {seeded.TotalSeconds:F0} s, then {(IsSqlite ? "ANALYZE" : "VACUUM ANALYZE wf_instances")} ({(clock.Elapsed - seeded).TotalSeconds:F0} s). Status: 10 % running, 30 % waiting, 60 % completed; region: EU 40 %, US 25 %, UK 15 %, APAC 12 %, LATAM 8 %; amount 0 to 20,000 in cents; createdAt and submittedAt spread over 2026.");
    }

    /// <summary>
    /// The plan of the page statement and of the total's statement the store runs for <paramref name="filter"/> (first page):
    /// EXPLAIN (ANALYZE, BUFFERS) on PostgreSQL, EXPLAIN QUERY PLAN on SQLite.
    /// </summary>
    public async Task<string> ExplainAsync(string filter, string? orderBy, int limit, int maxCounted, CancellationToken cancellationToken)
    {
        var declared = await DeclaredAsync(_tenant, cancellationToken);
        var fields = TenantSearchFields.Of(declared.Values);
        var parsed = SearchQuery.ParseFilter(filter, fields);
        var filterTree = parsed.Succeeded ? parsed.Value : throw new ArgumentException($"filter {filter}: {parsed.Error!.Message}", nameof(filter));
        var order = orderBy is null ? null : SearchQuery.ParseOrder(orderBy, fields).Value![0];
        var query = new InstanceQuery(Tenant: _tenant, Limit: limit, Filter: filterTree, Order: order, MaxCounted: maxCounted);
        var sql = new SearchSql(dialect, declared);

        // As RelationalWorkflowStore.SearchInstancesAsync writes them: the page (with every slot) and the capped total.
        var page = new SqlStatement(dialect).Sql(Explain).Sql("SELECT ").Sql(Rows.InstanceColumns);
        foreach (var attribute in declared.Values.OrderBy(a => a.Name, StringComparer.Ordinal))
        {
            page.Sql(", ").Sql(attribute.Slot);
        }

        sql.OrderBy(sql.From(page, query, seek: true), order).Sql(" LIMIT ").Param(limit).Sql(" OFFSET ").Param(0);
        var total = sql.From(new SqlStatement(dialect).Sql(Explain).Sql("SELECT COUNT(*) FROM (SELECT 1 AS one"), query, seek: false)
            .Sql(" LIMIT ").Param(maxCounted).Sql(") AS matched");
        return $"page:\n{await PlanAsync(page, cancellationToken)}\ntotal:\n{await PlanAsync(total, cancellationToken)}";
    }

    private string Explain => IsSqlite ? "EXPLAIN QUERY PLAN " : "EXPLAIN (ANALYZE, BUFFERS) ";

    /// <summary>The plan of an EXPLAIN statement, after the statement it explains.</summary>
    private async Task<string> PlanAsync(SqlStatement statement, CancellationToken cancellationToken)
    {
        await using var command = connection.CreateCommand();
        statement.ApplyTo(command);
        var text = new StringBuilder();
        text.AppendLine(statement.Text[Explain.Length..]);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var depth = new Dictionary<long, int>();
        while (await reader.ReadAsync(cancellationToken))
        {
            if (!IsSqlite)
            {
                text.AppendLine(reader.GetString(0));
                continue;
            }

            // id, parent, notused, detail: indented under its parent as the sqlite3 shell draws it.
            var level = depth.TryGetValue(reader.GetInt64(1), out var parent) ? parent + 1 : 0;
            depth[reader.GetInt64(0)] = level;
            text.Append(' ', level * 2).AppendLine(reader.GetString(3));
        }

        return text.ToString();
    }

    /// <summary>The tenant's search attributes by name, as the store maps them to slots.</summary>
    private async Task<Dictionary<string, DeclaredSearchAttribute>> DeclaredAsync(string tenant, CancellationToken cancellationToken)
    {
        await using var command = connection.CreateCommand();
        new SqlStatement(dialect).Sql("SELECT name, type, slot FROM wf_search_attributes WHERE tenant = ").Param(tenant).ApplyTo(command);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var declared = new Dictionary<string, DeclaredSearchAttribute>(StringComparer.Ordinal);
        while (await reader.ReadAsync(cancellationToken))
        {
            if (SearchTypeNames.TryParse(reader.GetString(1), out var type))
            {
                declared[reader.GetString(0)] = new DeclaredSearchAttribute(reader.GetString(0), type, reader.GetString(2));
            }
        }

        return declared;
    }

    private async Task<List<string>> ColumnsAsync(CancellationToken cancellationToken)
    {
        await using var command = connection.CreateCommand();
        new SqlStatement(dialect).Sql(IsSqlite
            ? "SELECT name FROM pragma_table_info('wf_instances') ORDER BY cid"
            : "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'wf_instances' ORDER BY ordinal_position")
            .ApplyTo(command);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var columns = new List<string>();
        while (await reader.ReadAsync(cancellationToken))
        {
            columns.Add(reader.GetString(0));
        }

        return columns;
    }

    /// <summary>A time <paramref name="seconds"/> into 2026, as the store keeps a UTC time (SQLite: the text EF Core writes).</summary>
    private string Time(string seconds) => IsSqlite
        ? $"strftime('%Y-%m-%d %H:%M:%S', {Year2026} + {seconds}, 'unixepoch')"
        : $"to_timestamp({Year2026} + {seconds})";

    private async Task ExecuteAsync(SqlStatement statement, CancellationToken cancellationToken)
    {
        await using var command = connection.CreateCommand();
        statement.ApplyTo(command);
        command.CommandTimeout = 1800;
        await command.ExecuteNonQueryAsync(cancellationToken);
    }

    private async Task<object?> ScalarAsync(SqlStatement statement, CancellationToken cancellationToken)
    {
        await using var command = connection.CreateCommand();
        statement.ApplyTo(command);
        return await command.ExecuteScalarAsync(cancellationToken);
    }

    public async ValueTask DisposeAsync()
    {
        await connection.DisposeAsync();
        await release();
    }
}
