using System.Text.Json;
using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;
using WorkflowService.Storage.Relational;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Store;

/// <summary>
/// The relational stores' history layout (schema 7): a commit's events in one wf_history row, read back event by event,
/// in order, through the store and the API, beside single-event rows an older release wrote.
/// </summary>
public abstract class RelationalHistoryTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    // Nothing but the test moves the instance: it commits to it directly.
    protected override Dictionary<string, string?> Settings => new() { ["Workers:Enabled"] = "false" };

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_commit_of_several_events_is_one_row_and_the_history_reads_them_one_by_one_in_order()
    {
        var id = await StartWaitingInstanceAsync();
        var before = await HistoryRowsAsync(id);
        var instances = Factory.Get<IInstanceStore>();
        var snapshot = (await instances.GetInstanceAsync("", id, Token))!;
        var at = At(snapshot);
        var events = new[]
        {
            Event(snapshot, 0, at, "SignalReceived", "wait-go", """{"signal":"go"}""", "alice"),
            // Kept as written, byte for byte: spacing, escapes and characters outside ASCII.
            Event(snapshot, 1, at.AddMilliseconds(1), "StepCompleted", "assign", """{ "n": 1, "text": "ünïcode \"quoted\" <tag> \u00e9" }""", "ünï"),
            Event(snapshot, 2, at.AddMilliseconds(2), "BranchTaken", null, "[1,2,3]", "bob"),
            Event(snapshot, 3, at.AddMilliseconds(3), "CallOutCompleted", "call", "\"a string\"", null),
            Event(snapshot, 4, at.AddMilliseconds(4), "InstanceCompleted", "done", "42", "carol"),
        };

        await CommitAsync(snapshot, events);

        var rows = await HistoryRowsAsync(id);
        var added = Assert.Single(rows.Skip(before.Count));
        Assert.Equal(events[0].Sequence, added.Sequence);
        Assert.NotNull(added.MoreJson);
        var history = await instances.GetHistoryAsync(snapshot, Token);
        AssertSameEvents(events, history.Skip(history.Count - events.Length));
        Assert.Equal(Enumerable.Range(0, history.Count), history.Select(e => e.Sequence));
        await AssertApiHistoryAsync(id, history);
    }

    [Fact]
    public async Task A_commit_of_one_event_is_one_row_without_more_json()
    {
        var id = await StartWaitingInstanceAsync();
        var before = await HistoryRowsAsync(id);
        var instances = Factory.Get<IInstanceStore>();
        var snapshot = (await instances.GetInstanceAsync("", id, Token))!;
        var single = Event(snapshot, 0, At(snapshot), "InstanceSuspended", null, """{"reason":"one"}""", "dave");

        await CommitAsync(snapshot, [single]);

        var added = Assert.Single((await HistoryRowsAsync(id)).Skip(before.Count));
        Assert.Equal(single.Sequence, added.Sequence);
        Assert.Null(added.MoreJson);
        AssertSameEvents([single], [(await instances.GetHistoryAsync(snapshot, Token))[^1]]);
    }

    [Fact]
    public async Task Single_event_rows_of_an_older_release_and_batch_rows_mix_in_one_history_in_sequence_order()
    {
        var id = await StartWaitingInstanceAsync();
        var instances = Factory.Get<IInstanceStore>();
        var snapshot = (await instances.GetInstanceAsync("", id, Token))!;
        var at = At(snapshot);
        // An older release's wait point: one row per event, more_json never set (it does not know the column).
        var old = new[]
        {
            Event(snapshot, 0, at, "SignalReceived", "wait-go", """{"signal":"go"}""", "old-node"),
            Event(snapshot, 1, at.AddMilliseconds(1), "StepCompleted", "assign", null, null),
        };
        await InsertSingleRowsAsync(old);
        snapshot = await WithHistoryLengthAsync(snapshot, old.Length);
        var batch = new[]
        {
            Event(snapshot, 0, at.AddMilliseconds(2), "InstanceSuspended", null, """{"reason":"batch"}""", "new-node"),
            Event(snapshot, 1, at.AddMilliseconds(3), "InstanceResumed", null, null, "new-node"),
            Event(snapshot, 2, at.AddMilliseconds(4), "WaitStarted", "wait-go", """{"signal":"go"}""", null),
        };
        await CommitAsync(snapshot, batch);
        snapshot = (await instances.GetInstanceAsync("", id, Token))!;
        var later = new[] { Event(snapshot, 0, at.AddMilliseconds(5), "SignalParked", "wait-go", """{"signal":"early"}""", null) };
        await InsertSingleRowsAsync(later);

        var history = await instances.GetHistoryAsync(snapshot, Token);

        Assert.Equal(Enumerable.Range(0, history.Count), history.Select(e => e.Sequence));
        AssertSameEvents([.. old, .. batch, .. later], history.Skip(history.Count - old.Length - batch.Length - later.Length));
        var rows = await HistoryRowsAsync(id);
        Assert.Equal(new string?[] { null, null }, rows.Where(r => r.Sequence >= old[0].Sequence && r.Sequence < batch[0].Sequence).Select(r => r.MoreJson));
        Assert.NotNull(Assert.Single(rows, r => r.Sequence == batch[0].Sequence).MoreJson);
        Assert.DoesNotContain(rows, r => r.Sequence > batch[0].Sequence && r.Sequence < later[0].Sequence);
        await AssertApiHistoryAsync(id, history);
    }

    [Fact]
    public async Task An_instance_run_by_the_engine_reads_back_every_event_from_one_row_per_wait_point()
    {
        // A service of its own with its workers on: the engine runs the wait points, as in production.
        var (service, api) = await StartServiceAsync([]);
        var name = Definitions.Unique("history-rows");
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        var id = (await api.StartAsync(name)).Id;
        await api.WaitForAsync(id, InstanceStatus.Waiting);
        await api.SignalAsync(id, "go", new { value = "x" });
        await api.WaitForAsync(id, InstanceStatus.Completed);

        var history = await api.HistoryAsync(id);
        var rows = await StoredHistoryRow.ReadAsync(service.Get<IDbContextFactory<WorkflowDbContext>>(), id);
        Assert.Equal(Enumerable.Range(0, history.Count), history.Select(e => e.Sequence));
        Assert.Equal("InstanceStarted", history[0].Type);
        Assert.Equal("InstanceCompleted", history[^1].Type);
        // One row per wait point: the start's, and the completion's; each holds more than one event.
        Assert.Equal(new[] { 0, history.Single(e => e.Type == "SignalReceived").Sequence }, rows.Select(r => r.Sequence));
        Assert.All(rows, r => Assert.NotNull(r.MoreJson));
    }

    private async Task<Guid> StartWaitingInstanceAsync()
    {
        var name = Definitions.Unique("history-rows");
        await Api.PublishAsync(Definitions.SignalRoundtrip(name));
        var started = await Api.StartAsync(name);
        await Api.WaitForAsync(started.Id, InstanceStatus.Waiting);
        return started.Id;
    }

    /// <summary>Whole milliseconds after the instance's last commit: what every database keeps exactly.</summary>
    private static DateTime At(WorkflowInstance instance) =>
        new DateTime(instance.UpdatedAt.Ticks - instance.UpdatedAt.Ticks % TimeSpan.TicksPerMillisecond, DateTimeKind.Utc).AddSeconds(1);

    /// <summary>The instance's history event numbered <paramref name="offset"/> after its history so far.</summary>
    private static HistoryEvent Event(WorkflowInstance instance, int offset, DateTime at, string type, string? step, string? data, string? actor) =>
        new() { InstanceId = instance.Id, Sequence = instance.HistoryLength + offset, At = at, Type = type, StepId = step, DataJson = data, Actor = actor };

    /// <summary>A wait point's commit of <paramref name="events"/> from <paramref name="snapshot"/>, through the store.</summary>
    private async Task CommitAsync(WorkflowInstance snapshot, HistoryEvent[] events)
    {
        var state = snapshot.Clone();
        state.HistoryLength += events.Length;
        state.UpdatedAt = events[^1].At;
        var commit = new WaitPointCommit { Instance = state, ExpectedVersion = snapshot.Version };
        commit.History.AddRange(events);
        await Factory.Get<IInstanceStore>().CommitAsync(commit, Token);
    }

    /// <summary>The instance with its history length moved on, as the release that wrote the events left it.</summary>
    private async Task<WorkflowInstance> WithHistoryLengthAsync(WorkflowInstance snapshot, int added)
    {
        await using var db = await Factory.Get<IDbContextFactory<WorkflowDbContext>>().CreateDbContextAsync(Token);
        await db.Instances.Where(i => i.Id == snapshot.Id)
            .ExecuteUpdateAsync(s => s.SetProperty(i => i.HistoryLength, i => i.HistoryLength + added), Token);
        return (await Factory.Get<IInstanceStore>().GetInstanceAsync("", snapshot.Id, Token))!;
    }

    /// <summary>Rows as a release before schema 7 writes them: one per event, no more_json.</summary>
    private async Task InsertSingleRowsAsync(IEnumerable<HistoryEvent> events)
    {
        await using var db = await Factory.Get<IDbContextFactory<WorkflowDbContext>>().CreateDbContextAsync(Token);
        db.History.AddRange(events.Select(e => new HistoryEvent
        {
            InstanceId = e.InstanceId, Sequence = e.Sequence, At = e.At, Type = e.Type, StepId = e.StepId, DataJson = e.DataJson, Actor = e.Actor,
        }));
        await db.SaveChangesAsync(Token);
    }

    private Task<IReadOnlyList<StoredHistoryRow>> HistoryRowsAsync(Guid id) =>
        StoredHistoryRow.ReadAsync(Factory.Get<IDbContextFactory<WorkflowDbContext>>(), id);

    private static void AssertSameEvents(IEnumerable<HistoryEvent> expectedEvents, IEnumerable<HistoryEvent> actualEvents)
    {
        List<HistoryEvent> expected = [.. expectedEvents], actual = [.. actualEvents];
        Assert.Equal(expected.Count, actual.Count);
        foreach (var (e, a) in expected.Zip(actual))
        {
            Assert.Equal(e.InstanceId, a.InstanceId);
            Assert.Equal(e.Sequence, a.Sequence);
            Assert.Equal(e.At, a.At);
            Assert.Equal(DateTimeKind.Utc, a.At.Kind);
            Assert.Equal(e.Type, a.Type);
            Assert.Equal(e.StepId, a.StepId);
            Assert.Equal(e.DataJson, a.DataJson);
            Assert.Equal(e.Actor, a.Actor);
        }
    }

    /// <summary>GET /instances/{id}/history lists the same events as the store, one item per event, in order.</summary>
    private async Task AssertApiHistoryAsync(Guid id, IReadOnlyList<HistoryEvent> history)
    {
        var items = await Api.HistoryAsync(id);
        Assert.Equal(history.Select(e => e.Sequence), items.Select(v => v.Sequence));
        foreach (var (e, v) in history.Zip(items))
        {
            Assert.Equal((e.At, e.Type, e.StepId, e.Actor), (v.At, v.Type, v.StepId, v.Actor));
            Assert.Equal(e.DataJson is null, v.Data is null);
            if (e.DataJson is not null)
            {
                using var data = JsonDocument.Parse(e.DataJson);
                Assert.True(JsonElement.DeepEquals(data.RootElement, v.Data!.Value), $"event {e.Sequence}: {e.DataJson} against {v.Data}");
            }
        }
    }
}

public sealed class SqliteRelationalHistoryTests : RelationalHistoryTests<SqliteBackend>;

public sealed class PostgresRelationalHistoryTests : RelationalHistoryTests<PostgresBackend>;

/// <summary>The row layout itself: which events share a row, and the JSON of the events after the first.</summary>
public sealed class HistoryRowsTests
{
    private static readonly DateTime T0 = new(2026, 11, 27, 12, 0, 0, DateTimeKind.Utc);

    [Fact]
    public void A_commits_events_are_one_row_and_another_instance_or_a_gap_in_the_sequence_starts_another()
    {
        Guid a = Guid.NewGuid(), b = Guid.NewGuid();
        var events = new[] { Event(a, 3), Event(a, 4), Event(a, 5), Event(b, 0), Event(b, 1), Event(b, 3) };

        var rows = HistoryRows.Of(events);

        Assert.Equal(new[] { (a, 3), (b, 0), (b, 3) }, rows.Select(r => (r.First.InstanceId, r.First.Sequence)));
        Assert.Equal([true, true, false], rows.Select(r => r.MoreJson is not null).ToArray());
        var read = new List<HistoryEvent>();
        foreach (var row in rows)
        {
            HistoryRows.Expand(row.First, row.MoreJson, read);
        }

        Assert.Equal(events.Select(e => (e.InstanceId, e.Sequence, e.Type, e.At, e.DataJson)), read.Select(e => (e.InstanceId, e.Sequence, e.Type, e.At, e.DataJson)));
    }

    [Fact]
    public void The_events_after_the_first_are_compact_json_with_their_data_embedded_as_json()
    {
        var id = Guid.NewGuid();
        var events = new[]
        {
            Event(id, 0),
            new HistoryEvent { InstanceId = id, Sequence = 1, At = T0, Type = "StepCompleted", StepId = "s", DataJson = """{"x":[1,"two",null]}""", Actor = "ann" },
            new HistoryEvent { InstanceId = id, Sequence = 2, At = T0.AddTicks(1), Type = "InstanceCompleted" },
        };

        var row = Assert.Single(HistoryRows.Of(events));

        Assert.Equal(
            """[{"at":"2026-11-27T12:00:00Z","type":"StepCompleted","step":"s","data":{"x":[1,"two",null]},"actor":"ann"},{"at":"2026-11-27T12:00:00.0000001Z","type":"InstanceCompleted"}]""",
            row.MoreJson);
    }

    [Fact]
    public void A_more_json_the_store_cannot_read_fails_with_the_row_it_came_from()
    {
        var first = Event(Guid.NewGuid(), 7);

        var error = Assert.Throws<InvalidDataException>(() => HistoryRows.Expand(first, """[{"type":"StepCompleted"}]""", []));

        Assert.Contains($"instance {first.InstanceId} at sequence 7", error.Message, StringComparison.Ordinal);
        Assert.Throws<InvalidDataException>(() => HistoryRows.Expand(first, """[{"at":"x","type":1}""", []));
    }

    private static HistoryEvent Event(Guid instance, int sequence) => new()
    {
        InstanceId = instance, Sequence = sequence, At = T0.AddSeconds(sequence), Type = $"Event{sequence}", DataJson = $$"""{"n":{{sequence}}}""",
    };
}
