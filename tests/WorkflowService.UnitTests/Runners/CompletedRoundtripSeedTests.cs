using Microsoft.Data.Sqlite;
using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;
using WorkflowService.RunnerBackends;
using WorkflowService.Storage.Relational;

namespace WorkflowService.UnitTests.Runners;

/// <summary>
/// The table-growth seed is one description (CompletedRoundtripSeed): the SQL the relational backends run server-side
/// stores exactly the instances, signals and history the builder makes from the engine's types, read back through the
/// store's own model.
/// </summary>
public sealed class CompletedRoundtripSeedTests : IAsyncLifetime
{
    private const int Count = 3;
    private static readonly long BaseMs = new DateTimeOffset(2026, 10, 1, 8, 0, 0, TimeSpan.Zero).ToUnixTimeMilliseconds();
    private readonly string _path = Path.Combine(Path.GetTempPath(), $"roundtrip-seed-{Guid.NewGuid():N}.db");

    private string ConnectionString => $"Data Source={_path};Pooling=False";

    public async ValueTask InitializeAsync()
    {
        await using (var db = Context())
        {
            await db.Database.EnsureCreatedAsync(TestContext.Current.CancellationToken);
        }

        await using var connection = new SqliteConnection(ConnectionString);
        await connection.OpenAsync(TestContext.Current.CancellationToken);
        foreach (var sql in SqliteBackend.SeedStatements)
        {
            // The backend's own fixed statements, run as the backend runs them.
#pragma warning disable CA2100
            await using var command = new SqliteCommand(SqliteBackend.Series + sql, connection);
#pragma warning restore CA2100
            command.Parameters.AddWithValue("$lo", 1);
            command.Parameters.AddWithValue("$hi", Count);
            command.Parameters.AddWithValue("$base", BaseMs);
            await command.ExecuteNonQueryAsync(TestContext.Current.CancellationToken);
        }
    }

    public ValueTask DisposeAsync()
    {
        File.Delete(_path);
        return ValueTask.CompletedTask;
    }

    [Fact]
    public async Task The_SQLite_seed_stores_the_instances_the_builder_makes()
    {
        await using var db = Context();
        var stored = await db.Instances.AsNoTracking().OrderBy(i => i.CreatedAt).ToListAsync(TestContext.Current.CancellationToken);

        Assert.Equal(Count, stored.Count);
        for (var n = 1; n <= Count; n++)
        {
            var expected = CompletedRoundtripSeed.Build(n, BaseMs + n * 1000L).Instance;
            var actual = stored[n - 1];
            Assert.Equal((expected.Id, expected.DefinitionName, expected.DefinitionVersion, expected.Status, expected.VariablesJson, expected.OutputJson),
                (actual.Id, actual.DefinitionName, actual.DefinitionVersion, actual.Status, actual.VariablesJson, actual.OutputJson));
            Assert.Equal((expected.Version, expected.HistoryLength, expected.CreatedAt, expected.UpdatedAt, expected.CompletedAt),
                (actual.Version, actual.HistoryLength, actual.CreatedAt, actual.UpdatedAt, actual.CompletedAt));
        }
    }

    [Fact]
    public async Task The_SQLite_seed_stores_the_handled_signals_the_builder_makes()
    {
        await using var db = Context();
        var stored = await db.Signals.AsNoTracking().OrderBy(s => s.DueAtMs).ToListAsync(TestContext.Current.CancellationToken);

        Assert.Equal(Count, stored.Count);
        for (var n = 1; n <= Count; n++)
        {
            var expected = CompletedRoundtripSeed.Build(n, BaseMs + n * 1000L).Signal;
            var actual = stored[n - 1];
            Assert.Equal((expected.Id, expected.InstanceId, expected.Name, expected.PayloadJson, expected.Status, expected.DueAtMs, expected.Attempts),
                (actual.Id, actual.InstanceId, actual.Name, actual.PayloadJson, actual.Status, actual.DueAtMs, actual.Attempts));
            Assert.Equal((expected.LeaseOwner, expected.LeaseToken, expected.CreatedAt, expected.HandledAt),
                (actual.LeaseOwner, actual.LeaseToken, actual.CreatedAt, actual.HandledAt));
        }
    }

    [Fact]
    public async Task The_SQLite_seed_stores_the_history_the_builder_makes_with_the_engine_event_types()
    {
        await using var db = Context();
        var stored = await db.History.AsNoTracking().ToListAsync(TestContext.Current.CancellationToken);

        var expected = Enumerable.Range(1, Count).SelectMany(n => CompletedRoundtripSeed.Build(n, BaseMs + n * 1000L).History)
            .Select(e => (e.InstanceId, e.Sequence, e.At, e.Type, e.StepId, e.DataJson)).ToList();
        Assert.Equal(expected, stored.Select(e => (e.InstanceId, e.Sequence, e.At, e.Type, e.StepId, e.DataJson))
            .OrderBy(e => expected.FindIndex(x => x.InstanceId == e.InstanceId && x.Sequence == e.Sequence)));
        Assert.Equal([HistoryEventTypes.InstanceStarted, HistoryEventTypes.WaitStarted, HistoryEventTypes.SignalReceived,
            HistoryEventTypes.StepCompleted, HistoryEventTypes.InstanceCompleted], CompletedRoundtripSeed.History.Select(e => e.Type));
    }

    private WorkflowDbContext Context() => new(new DbContextOptionsBuilder<WorkflowDbContext>().UseSqlite(ConnectionString).Options);
}
