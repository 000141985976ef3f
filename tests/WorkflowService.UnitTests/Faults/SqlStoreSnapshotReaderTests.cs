using Microsoft.Data.Sqlite;
using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;
using WorkflowService.Storage.Relational;
using WorkflowService.RunnerBackends;

namespace WorkflowService.UnitTests.Faults;

/// <summary>
/// The fault checker's reader of the relational tables sees every history event, whether its row is a single event (a
/// release before schema 7, or the benchmarks' seeding) or a wait point's batch (more_json).
/// </summary>
public sealed class SqlStoreSnapshotReaderTests : IAsyncLifetime
{
    private static readonly DateTime T0 = new(2026, 11, 27, 12, 0, 0, DateTimeKind.Utc);
    private readonly string _path = Path.Combine(Path.GetTempPath(), $"snapshot-reader-{Guid.NewGuid():N}.db");
    private readonly Guid _instance = Guid.NewGuid();
    private readonly Guid _signal = Guid.NewGuid();

    private string ConnectionString => $"Data Source={_path};Pooling=False";

    public async ValueTask InitializeAsync()
    {
        await using var db = new WorkflowDbContext(new DbContextOptionsBuilder<WorkflowDbContext>().UseSqlite(ConnectionString).Options);
        await db.Database.EnsureCreatedAsync(TestContext.Current.CancellationToken);
        db.Signals.Add(new SignalMessage { Id = _signal, InstanceId = _instance, Name = "a", Status = SignalStatus.Handled, DueAtMs = 1_000, CreatedAt = T0 });
        db.History.Add(new HistoryEvent { InstanceId = _instance, Sequence = 0, At = T0, Type = "InstanceStarted" });
        var batch = new HistoryEvent
        {
            InstanceId = _instance, Sequence = 1, At = T0.AddSeconds(1), Type = "SignalReceived", StepId = "wait-a",
            DataJson = $$"""{"signal":"a","signalId":"{{_signal}}"}""",
        };
        db.History.Add(batch);
        // The layout the store writes (HistoryRows): the events after the row's first, their sequences implied.
        db.Entry(batch).Property("MoreJson").CurrentValue =
            """[{"at":"2026-11-27T12:00:02Z","type":"TimerFired","step":"cool-off"},{"at":"2026-11-27T12:00:03Z","type":"InstanceCompleted","data":{"done":true}}]""";
        await db.SaveChangesAsync(TestContext.Current.CancellationToken);
    }

    public ValueTask DisposeAsync()
    {
        File.Delete(_path);
        return ValueTask.CompletedTask;
    }

    [Fact]
    public async Task The_snapshot_lists_every_event_of_single_and_batch_rows_in_order()
    {
        await using var reader = await OpenReaderAsync();

        var snapshot = await reader.ReadAsync(TestContext.Current.CancellationToken);

        var history = snapshot.History.OrderBy(e => e.Sequence).ToList();
        Assert.Equal(["InstanceStarted", "SignalReceived", "TimerFired", "InstanceCompleted"], history.Select(e => e.Type).ToArray());
        Assert.Equal([0, 1, 2, 3], history.Select(e => e.Sequence).ToArray());
        Assert.All(history, e => Assert.Equal(_instance, e.InstanceId));
        Assert.Equal(_signal, history[1].SignalId);
        Assert.Equal(T0.AddSeconds(3), history[3].At);
    }

    [Fact]
    public async Task A_fired_event_inside_a_batch_row_is_matched_to_its_signals_due_time()
    {
        await using var reader = await OpenReaderAsync();

        var fired = await reader.ReadDueAndFiredAsync("a", "TimerFired", "cool-off", TestContext.Current.CancellationToken);

        Assert.Equal([(1_000L, T0.AddSeconds(2))], fired.ToArray());
        Assert.Empty(await reader.ReadDueAndFiredAsync("a", "TimerFired", "another-step", TestContext.Current.CancellationToken));
    }

    /// <summary>A reader on an open connection, as the backends hand it one; it owns the connection.</summary>
    private async Task<SqlStoreSnapshotReader> OpenReaderAsync()
    {
        var connection = new SqliteConnection(ConnectionString);
        await connection.OpenAsync(TestContext.Current.CancellationToken);
        return new SqlStoreSnapshotReader(connection);
    }
}
