using System.Net;
using System.Net.Http.Json;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// Signals applied on arrival (issue 35) when the node applying them is killed with SIGKILL mid-commit: each eager
/// commit (the signal row written as handled, the instance, its history) lands whole or not at all, and a client that
/// retries every unanswered signal with its Idempotency-Key gets each one applied exactly once.
/// </summary>
public abstract class SignalsOnArrivalNodeKillTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    // The test runs service processes of its own on a database of its own.
    protected override bool UsesDefaultService => false;

    private const int Instances = 200;

    /// <summary>The node dies once this many signal requests have been answered: the rest are in flight or not yet read.</summary>
    private const int KillAfterAnswers = Instances / 4;

    /// <summary>Signal requests in flight at once: enough that many eager commits are under way when the node dies.</summary>
    private const int Concurrency = 64;

    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task A_node_killed_while_it_applies_signals_on_arrival_loses_and_duplicates_none()
    {
        var database = await CreateDatabaseAsync();
        var settings = new Dictionary<string, string?>(database.Settings)
        {
            ["Engine:ApplySignalsOnArrival"] = "true",
            ["Workers:Enabled"] = "true",
            // A signal the dead node had queued and claimed is taken over once its lease expires: keep that short.
            ["Workers:LeaseDuration"] = "00:00:03",
            ["Workers:PollInterval"] = "00:00:00.500",
        };

        var first = Own(await TestServiceProcess.StartAsync("node-a", settings));
        using var firstClient = first.CreateClient();
        var api = new ApiClient(firstClient);
        var definition = Definitions.Unique("arrival-kill");
        await api.PublishAsync(Definitions.SignalRoundtrip(definition));
        var ids = new Guid[Instances];
        await System.Threading.Tasks.Parallel.ForAsync(0, Instances, new ParallelOptions { MaxDegreeOfParallelism = 8 },
            async (i, _) => ids[i] = (await api.StartAsync(definition, new { i })).Id);

        // Every instance now waits for "go" and node-a holds its state: each signal below takes the eager path unless
        // the kill cuts it short. Senders keep Concurrency requests in flight, however fast the node answers; the
        // answer that makes KillAfterAnswers kills it, so that those in flight die wherever they are: in the run, in
        // the commit, or with their answer unsent. The ones not sent yet find the node gone.
        var answers = new Answer?[Instances];
        var answered = 0;
        var next = -1;
        await Task.WhenAll(Enumerable.Range(0, Concurrency).Select(async _ =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < Instances)
            {
                answers[i] = await TrySignalAsync(firstClient, ids[i], i);
                if (answers[i] is not null && Interlocked.Increment(ref answered) == KillAfterAnswers)
                {
                    first.Kill();
                }
            }
        }));

        Assert.True(first.HasExited, $"node-a was not killed: only {answered} of {Instances} signals were answered");
        Assert.All(answers.OfType<Answer>(), a => Assert.Equal(HttpStatusCode.Accepted, a.Status));
        // The eager path was taken (not the queue, e.g. by a setting gone astray), and the kill cut requests short.
        Assert.Contains(answers, a => a?.Signal.Status == SignalStatus.Handled);
        var lost = Enumerable.Range(0, Instances).Where(i => answers[i] is null).ToList();
        Assert.NotEmpty(lost);

        // What the kill left in the store, before anything runs on it again (a node without workers only reads): its
        // connections died with it, so PostgreSQL rolled back any transaction not yet committed, and SQLite's
        // write-ahead log drops a torn commit when the file is next opened.
        var atKill = await ReadWithoutWorkersAsync(database, ids);
        var landed = 0;
        for (var i = 0; i < Instances; i++)
        {
            var (instance, history, signals) = atKill[i];
            Assert.True(signals.Count <= 1, $"instance {ids[i]} holds {signals.Count} signals after one request");
            if (instance.Status == InstanceStatus.Completed)
            {
                // A commit that landed landed whole: the handled signal, the completion and its history.
                var signal = Assert.Single(signals);
                Assert.Equal(SignalStatus.Handled, signal.Status);
                AssertAppliedOnce(history, signal.Id);
                landed += answers[i] is null ? 1 : 0;
            }
            else
            {
                // One that did not left nothing of the run: the instance still waits, its signal (if stored) is queued.
                Assert.Equal(InstanceStatus.Waiting, instance.Status);
                Assert.DoesNotContain(history, h => h.Type is HistoryEventTypes.SignalReceived or HistoryEventTypes.InstanceCompleted);
                Assert.All(signals, s => Assert.Equal(SignalStatus.Pending, s.Status));
                // An answer that said Handled was a commit that had landed.
                Assert.NotEqual(SignalStatus.Handled, answers[i]?.Signal.Status);
            }
        }

        // A node starts again on the same store, and the client retries every signal it got no answer for, with the
        // same Idempotency-Key: 200 for one the dead node had stored, 202 for one it had not.
        var second = Own(await TestServiceProcess.StartAsync("node-b", settings));
        using var secondClient = second.CreateClient();
        var retried = await Task.WhenAll(lost.Select(i => SignalAsync(secondClient, ids[i], i)));
        foreach (var (i, retry) in lost.Zip(retried))
        {
            Assert.True(retry.Status is HttpStatusCode.OK or HttpStatusCode.Accepted, $"retry of go-{i}: {(int)retry.Status}");
            // The key finds what the first attempt stored, whatever happened to it since.
            var stored = atKill[i].Signals.SingleOrDefault();
            Assert.Equal(stored is not null, retry.Status == HttpStatusCode.OK);
            if (stored is not null)
            {
                Assert.Equal(stored.Id, retry.Signal.Id);
            }

            answers[i] = retry;
        }

        // Every instance completes: queued signals by node-b's workers, those node-a had claimed once their lease
        // expires.
        var secondApi = new ApiClient(secondClient);
        await System.Threading.Tasks.Parallel.ForAsync(0, Instances, new ParallelOptions { MaxDegreeOfParallelism = 16 },
            async (i, _) => await secondApi.WaitForAsync(ids[i], InstanceStatus.Completed, Deadline));

        // Exactly once: each instance completed by the signal its client was answered with, applied once, handled.
        for (var i = 0; i < Instances; i++)
        {
            var instance = await secondApi.GetAsync(ids[i]);
            Assert.Equal(InstanceStatus.Completed, instance.Status);
            Assert.Equal(i, instance.Output!.Value.GetProperty("result").GetInt32());
            var signal = Assert.Single(await secondApi.SignalsAsync(ids[i]));
            Assert.Equal((answers[i]!.Signal.Id, SignalStatus.Handled), (signal.Id, signal.Status));
            AssertAppliedOnce(await secondApi.HistoryAsync(ids[i]), signal.Id);
        }

        // Nothing is left behind in the queue.
        var pending = await secondClient.GetFromJsonAsync<PageView<SignalView>>("/signals?status=Pending&limit=1", WorkflowServiceFactory.Json);
        var parked = await secondClient.GetFromJsonAsync<PageView<SignalView>>("/signals?status=Parked&limit=1", WorkflowServiceFactory.Json);
        var dead = await secondClient.GetFromJsonAsync<PageView<SignalView>>("/dead-letters?limit=1", WorkflowServiceFactory.Json);
        Assert.Equal((0, 0, 0), (pending!.Total, parked!.Total, dead!.Total));

        // What the kill hit, for the log: how many commits landed with their answer lost varies from run to run.
        var onArrival = answers.Where((_, i) => !lost.Contains(i)).Count(a => a!.Signal.Status == SignalStatus.Handled);
        TestContext.Current.TestOutputHelper?.WriteLine(
            $"{typeof(TBackend).Name}: {Instances - lost.Count} answered before the kill ({onArrival} applied on arrival); " +
            $"{lost.Count} unanswered, of which {lost.Count(i => atKill[i].Signals.Count == 1)} stored and {landed} committed whole");
    }

    /// <summary>One SignalReceived, naming the signal, and one completion: the signal was applied once.</summary>
    private static void AssertAppliedOnce(IReadOnlyList<HistoryEventView> history, Guid signalId)
    {
        var received = Assert.Single(history, h => h.Type == HistoryEventTypes.SignalReceived);
        Assert.Equal(signalId, received.Data!.Value.GetProperty("signalId").GetGuid());
        Assert.Single(history, h => h.Type == HistoryEventTypes.InstanceCompleted);
    }

    /// <summary>Every instance, its history and its signals as the store holds them, read by an in-process node without workers.</summary>
    private static async Task<(InstanceView Instance, IReadOnlyList<HistoryEventView> History, IReadOnlyList<SignalView> Signals)[]> ReadWithoutWorkersAsync(
        BackendDatabase database, Guid[] ids)
    {
        var settings = new Dictionary<string, string?>(database.Settings) { ["Workers:Enabled"] = "false" };
        await using var reader = new WorkflowServiceFactory(settings);
        var api = new ApiClient(reader.CreateClient());
        var read = new (InstanceView, IReadOnlyList<HistoryEventView>, IReadOnlyList<SignalView>)[ids.Length];
        for (var i = 0; i < ids.Length; i++)
        {
            read[i] = (await api.GetAsync(ids[i]), await api.HistoryAsync(ids[i]), await api.SignalsAsync(ids[i]));
        }

        return read;
    }

    /// <summary>Sends instance <paramref name="i"/>'s "go"; null when the node died before the answer was read.</summary>
    private static async Task<Answer?> TrySignalAsync(HttpClient client, Guid id, int i)
    {
        try
        {
            return await SignalAsync(client, id, i);
        }
        catch (Exception e) when (e is HttpRequestException or IOException)
        {
            return null;
        }
    }

    /// <summary>Instance <paramref name="i"/>'s one "go", always with the same payload and Idempotency-Key, as a client's retry sends it.</summary>
    private static async Task<Answer> SignalAsync(HttpClient client, Guid id, int i)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, $"/instances/{id}/signals")
        {
            Content = JsonContent.Create(new { name = "go", payload = new { value = i } }, options: WorkflowServiceFactory.Json),
        };
        request.Headers.Add("Idempotency-Key", $"go-{id:N}");
        using var response = await client.SendAsync(request);
        var body = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode is HttpStatusCode.OK or HttpStatusCode.Accepted, $"go-{i}: {(int)response.StatusCode} {body}");
        return new Answer(response.StatusCode, System.Text.Json.JsonSerializer.Deserialize<SignalView>(body, WorkflowServiceFactory.Json)!);
    }

    private sealed record Answer(HttpStatusCode Status, SignalView Signal);
}

public sealed class SqliteSignalsOnArrivalNodeKillTests : SignalsOnArrivalNodeKillTests<SqliteBackend>;

public sealed class PostgresSignalsOnArrivalNodeKillTests : SignalsOnArrivalNodeKillTests<PostgresBackend>;
