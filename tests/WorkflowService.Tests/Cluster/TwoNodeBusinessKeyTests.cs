using System.Globalization;
using System.Net;
using System.Net.Http.Json;
using WorkflowService.Api;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// Two service nodes on one PostgreSQL database, each with its own schedule runner and signal workers: a race of
/// signal-with-start requests on one new key spread over both, and a schedule firing every second that both runners
/// look at. The store decides (the open-key index, the idempotent start, the schedule's lease and revision), so which
/// node answers or fires changes nothing.
/// </summary>
public sealed class TwoNodeBusinessKeyTests : ServiceTest<PostgresBackend>
{
    private const string FireTimeFormat = "yyyyMMddHHmmss";

    // The test runs two nodes of its own on a database of its own.
    protected override bool UsesDefaultService => false;

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_hundred_signal_with_starts_on_one_new_key_over_two_nodes_make_one_instance_with_every_signal()
    {
        var nodes = await StartTwoNodesAsync();
        var name = Definitions.Unique("two-node-race");
        await nodes[0].PublishAsync(Definitions.SignalRoundtrip(name));

        var answers = await Task.WhenAll(Enumerable.Range(0, 100).Select(async n =>
        {
            // "note" is parked while the instance waits for "go": every signal stays in its ledger and it stays open.
            using var response = await nodes[n % 2].Http.PostAsJsonAsync($"/definitions/{name}/instances/order-7/signal-with-start",
                new { signal = "note", payload = new { n }, input = new { customer = 7 } }, WorkflowServiceFactory.Json, Token);
            Assert.True(response.StatusCode == HttpStatusCode.Accepted, $"request {n}: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync(Token)}");
            return (await response.Content.ReadFromJsonAsync<SignalWithStartView>(WorkflowServiceFactory.Json, Token))!;
        }));

        var instance = Assert.Single(answers.Select(a => a.InstanceId).Distinct());
        Assert.Single(answers, a => a.Started);
        foreach (var node in nodes)
        {
            Assert.Equal(instance, Assert.Single(await node.EveryPageAsync<InstanceSummaryView>($"/instances?definition={name}")).Id);
        }

        var ledger = await nodes[1].SignalsAsync(instance);
        Assert.Equal(Enumerable.Range(0, 100), ledger.Select(s => s.Payload!.Value.GetProperty("n").GetInt32()).Order());
        Assert.All(ledger, s => Assert.Equal("note", s.Name));
    }

    [Fact]
    public async Task Two_nodes_start_each_occurrence_of_a_schedule_firing_every_second_once_and_none_early()
    {
        var nodes = await StartTwoNodesAsync();
        var definition = Definitions.Unique("two-node-tick");
        await nodes[0].PublishAsync(Definitions.SignalRoundtrip(definition));
        // Every second, on the store's (the database's) clock; each occurrence's key names its time.
        using var create = await nodes[0].Http.PostAsJsonAsync("/schedules", new
        {
            name = Definitions.Unique("every-second"), definition, cron = "* * * * * *", overlapPolicy = "AllowAll",
            businessKey = $"tick-{{fireTime:{FireTimeFormat}}}",
        }, WorkflowServiceFactory.Json, Token);
        Assert.True(create.StatusCode == HttpStatusCode.Created, await create.Content.ReadAsStringAsync(Token));
        var schedule = (await create.Content.ReadFromJsonAsync<ScheduleView>(WorkflowServiceFactory.Json, Token))!;

        async Task<IReadOnlyList<InstanceSummaryView>> StartedAsync() => await nodes[1].EveryPageAsync<InstanceSummaryView>($"/instances?definition={definition}");
        await Eventually.WaitUntilAsync(async () => (await StartedAsync()).Count >= 10, TimeSpan.FromMinutes(1), what: "ten occurrences started");
        using (var deleted = await nodes[1].Http.DeleteAsync($"/schedules/{schedule.Id}", Token))
        {
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }

        var started = (await StartedAsync()).Select(i => (Instance: i, FireTime: FireTimeOf(i.BusinessKey!))).OrderBy(s => s.FireTime).ToList();
        // Once each: no two instances for one occurrence.
        Assert.Equal(started.Count, started.Select(s => s.FireTime).Distinct().Count());
        // None missed between the first and the last, and none before the schedule was made.
        var first = started[0].FireTime;
        Assert.Equal([.. Enumerable.Range(0, started.Count).Select(s => first.AddSeconds(s))], started.Select(s => s.FireTime));
        Assert.True(first > schedule.CreatedAt, $"first occurrence {first:O}, schedule made at {schedule.CreatedAt:O}");
        // None early: each instance was made (on the store's clock of the node that fired it) at or after its occurrence's time.
        Assert.All(started, s => Assert.True(s.Instance.CreatedAt >= s.FireTime, $"{s.Instance.BusinessKey} started at {s.Instance.CreatedAt:O}"));
    }

    private async Task<ApiClient[]> StartTwoNodesAsync()
    {
        var database = await CreateDatabaseAsync();
        var settings = new Dictionary<string, string?>
        {
            ["Schedules:PollInterval"] = "00:00:00.250",
            ["Schedules:LeaseDuration"] = "00:00:05",
        };
        // One after the other: the first creates the schema.
        var first = await StartServiceAsync(settings, database: database);
        var second = await StartServiceAsync(settings, database: database);
        return [first.Api, second.Api];
    }

    private static DateTime FireTimeOf(string businessKey) =>
        DateTime.ParseExact(businessKey["tick-".Length..], FireTimeFormat, CultureInfo.InvariantCulture,
            DateTimeStyles.AssumeUniversal | DateTimeStyles.AdjustToUniversal);
}
