using System.Net;
using System.Net.Http.Json;
using WorkflowService.Api;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Api;

/// <summary>
/// An instance addressed by its definition and business key (read, long-poll, signal), and signal-with-start, through the
/// real HTTP pipeline with API keys of two tenants.
/// </summary>
public abstract class BusinessKeyApiTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private static readonly TestApiKey AcmeKey = TestApiKey.ForTenant("acme", "acme-app", "admin");
    private static readonly TestApiKey GlobexKey = TestApiKey.ForTenant("globex", "globex-app", "admin");

    protected override Dictionary<string, string?> Settings => TestApiKey.Settings(AcmeKey, GlobexKey);

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    /// <summary>Waits for "go", then completes with its payload; signals of any other name are parked meanwhile.</summary>
    private async Task<(ApiClient Api, string Name)> PublishAsync(string prefix)
    {
        var api = WithApiKey(AcmeKey);
        var name = Definitions.Unique(prefix);
        await api.PublishAsync(Definitions.SignalRoundtrip(name));
        return (api, name);
    }

    private static async Task<HttpResponseMessage> SignalWithStartAsync(ApiClient api, string name, string key, string signal, object? payload = null,
        object? input = null) =>
        await api.Http.PostAsJsonAsync($"/definitions/{name}/instances/{key}/signal-with-start", new { signal, payload, input }, WorkflowServiceFactory.Json, Token);

    [Fact]
    public async Task An_instance_is_read_and_signalled_by_its_business_key()
    {
        var (api, name) = await PublishAsync("bk-found");
        var started = await api.StartAsync(name, businessKey: "claim-1");

        var read = await api.Http.GetFromJsonAsync<InstanceView>($"/definitions/{name}/instances/claim-1", WorkflowServiceFactory.Json, Token);
        Assert.Equal(started.Id, read!.Id);

        using var signal = await api.Http.PostAsJsonAsync($"/definitions/{name}/instances/claim-1/signals", new { name = "go", payload = new { value = 7 } }, Token);
        Assert.Equal(HttpStatusCode.Accepted, signal.StatusCode);
        Assert.Equal(started.Id, (await signal.Content.ReadFromJsonAsync<SignalView>(WorkflowServiceFactory.Json, Token))!.InstanceId);
        var done = await api.WaitForAsync(started.Id, InstanceStatus.Completed);
        Assert.Equal(7, done.Output!.Value.GetProperty("result").GetInt32());
    }

    [Fact]
    public async Task A_long_poll_by_business_key_returns_once_the_instance_reaches_the_status()
    {
        var (api, name) = await PublishAsync("bk-poll");
        var started = await api.StartAsync(name, businessKey: "claim-2");

        var waiting = api.Http.GetFromJsonAsync<InstanceView>($"/definitions/{name}/instances/claim-2?waitFor=Completed&timeout=30", WorkflowServiceFactory.Json, Token);
        await api.SignalAsync(started.Id, "go", new { value = 1 });
        var done = await waiting;

        Assert.Equal(started.Id, done!.Id);
        Assert.Equal(InstanceStatus.Completed, done.Status);
    }

    [Fact]
    public async Task An_unknown_business_key_answers_404_and_a_bad_one_400()
    {
        var (api, name) = await PublishAsync("bk-missing");

        using var read = await api.Http.GetAsync($"/definitions/{name}/instances/no-such-claim", Token);
        var problem = await ApiClient.ProblemAsync(read, HttpStatusCode.NotFound);
        Assert.Equal($"No instance of '{name}' has the business key 'no-such-claim'.", problem["detail"]!.GetValue<string>());
        using var signal = await api.Http.PostAsJsonAsync($"/definitions/{name}/instances/no-such-claim/signals", new { name = "go" }, Token);
        await ApiClient.ProblemAsync(signal, HttpStatusCode.NotFound);
        using var tooLong = await api.Http.GetAsync($"/definitions/{name}/instances/{new string('k', 201)}", Token);
        await ApiClient.ProblemAsync(tooLong, HttpStatusCode.BadRequest);
    }

    [Fact]
    public async Task A_business_key_with_a_control_character_is_refused_with_its_field_named()
    {
        var (api, name) = await PublishAsync("bk-control");

        using var start = await api.Http.PostAsJsonAsync("/instances", new { definition = name, businessKey = "claim\n7" }, Token);
        var problem = await ApiClient.ProblemAsync(start, HttpStatusCode.BadRequest);
        Assert.Contains("businessKey must not hold control characters", problem.ToJsonString(), StringComparison.Ordinal);
        using var read = await api.Http.GetAsync($"/definitions/{name}/instances/claim%097", Token);
        await ApiClient.ProblemAsync(read, HttpStatusCode.BadRequest);
        // Nothing was started.
        Assert.Empty(await api.EveryPageAsync<InstanceSummaryView>($"/instances?definition={name}"));
    }

    [Fact]
    public async Task Another_tenants_business_key_is_not_found_and_its_instance_is_untouched()
    {
        var (acme, name) = await PublishAsync("bk-tenant");
        var instance = await acme.StartAsync(name, businessKey: "claim-3");
        var globex = WithApiKey(GlobexKey);
        await globex.PublishAsync(Definitions.SignalRoundtrip(name));

        using var read = await globex.Http.GetAsync($"/definitions/{name}/instances/claim-3", Token);
        var problem = await ApiClient.ProblemAsync(read, HttpStatusCode.NotFound);
        Assert.Equal($"No instance of '{name}' has the business key 'claim-3'.", problem["detail"]!.GetValue<string>());
        using var signal = await globex.Http.PostAsJsonAsync($"/definitions/{name}/instances/claim-3/signals", new { name = "go" }, Token);
        await ApiClient.ProblemAsync(signal, HttpStatusCode.NotFound);

        Assert.Empty(await acme.SignalsAsync(instance.Id));
        Assert.Equal(InstanceStatus.Waiting, (await acme.GetAsync(instance.Id)).Status);
    }

    [Fact]
    public async Task Signal_with_start_starts_the_instance_with_its_input_then_signals_the_same_one()
    {
        var (api, name) = await PublishAsync("bk-sws");

        using var first = await SignalWithStartAsync(api, name, "claim-4", "note", new { n = 1 }, input: new { customer = 9 });
        Assert.Equal(HttpStatusCode.Accepted, first.StatusCode);
        var started = (await first.Content.ReadFromJsonAsync<SignalWithStartView>(WorkflowServiceFactory.Json, Token))!;
        using var second = await SignalWithStartAsync(api, name, "claim-4", "go", new { value = 2 });
        var again = (await second.Content.ReadFromJsonAsync<SignalWithStartView>(WorkflowServiceFactory.Json, Token))!;

        Assert.True(started.Started);
        Assert.False(again.Started);
        Assert.Equal(started.InstanceId, again.InstanceId);
        var done = await api.WaitForAsync(started.InstanceId, InstanceStatus.Completed);
        Assert.Equal(9, done.Input!.Value.GetProperty("customer").GetInt32());
        Assert.Equal(["note", "go"], (await api.SignalsAsync(started.InstanceId)).Select(s => s.Name));
    }

    [Fact]
    public async Task A_hundred_racing_signal_with_starts_on_a_new_key_make_one_instance_with_every_signal()
    {
        var (api, name) = await PublishAsync("bk-race");

        var answers = await Task.WhenAll(Enumerable.Range(0, 100).Select(async n =>
        {
            using var response = await SignalWithStartAsync(api, name, "claim-5", "note", new { n });
            Assert.Equal(HttpStatusCode.Accepted, response.StatusCode);
            return (await response.Content.ReadFromJsonAsync<SignalWithStartView>(WorkflowServiceFactory.Json, Token))!;
        }));

        var instance = Assert.Single(answers.Select(a => a.InstanceId).Distinct());
        Assert.Single(answers, a => a.Started);
        var listed = await api.Http.GetFromJsonAsync<PageView<InstanceSummaryView>>($"/instances?definition={name}", WorkflowServiceFactory.Json, Token);
        Assert.Equal(instance, Assert.Single(listed!.Items).Id);
        var ledger = await api.SignalsAsync(instance);
        Assert.Equal(Enumerable.Range(0, 100), ledger.Where(s => s.Name == "note").Select(s => s.Payload!.Value.GetProperty("n").GetInt32()).Order());
    }

    [Fact]
    public async Task Signal_with_start_on_an_ended_instances_key_starts_a_new_instance()
    {
        var (api, name) = await PublishAsync("bk-ended");
        var ended = await api.StartAsync(name, businessKey: "claim-6");
        await api.SignalAsync(ended.Id, "go", new { value = 1 });
        await api.WaitForAsync(ended.Id, InstanceStatus.Completed);

        using var response = await SignalWithStartAsync(api, name, "claim-6", "go", new { value = 2 });
        Assert.Equal(HttpStatusCode.Accepted, response.StatusCode);
        var answer = (await response.Content.ReadFromJsonAsync<SignalWithStartView>(WorkflowServiceFactory.Json, Token))!;

        Assert.True(answer.Started);
        Assert.NotEqual(ended.Id, answer.InstanceId);
        var done = await api.WaitForAsync(answer.InstanceId, InstanceStatus.Completed);
        Assert.Equal(2, done.Output!.Value.GetProperty("result").GetInt32());
        var listed = await api.Http.GetFromJsonAsync<PageView<InstanceSummaryView>>($"/instances?definition={name}", WorkflowServiceFactory.Json, Token);
        Assert.Equal([ended.Id, answer.InstanceId], listed!.Items.Select(i => i.Id).Order());
    }

    [Fact]
    public async Task A_key_names_the_open_instance_and_once_every_one_ended_the_newest()
    {
        var (api, name) = await PublishAsync("bk-reuse");
        var first = await api.StartAsync(name, businessKey: "claim-8");
        Assert.Equal(first.Id, (await api.StartAsync(name, businessKey: "claim-8", expected: HttpStatusCode.OK)).Id);
        await api.SignalAsync(first.Id, "go", new { value = 1 });
        await api.WaitForAsync(first.Id, InstanceStatus.Completed);

        var second = await api.StartAsync(name, businessKey: "claim-8");
        var open = await api.Http.GetFromJsonAsync<InstanceView>($"/definitions/{name}/instances/claim-8", WorkflowServiceFactory.Json, Token);
        Assert.NotEqual(first.Id, second.Id);
        Assert.Equal(second.Id, open!.Id);

        await api.SignalAsync(second.Id, "go", new { value = 2 });
        await api.WaitForAsync(second.Id, InstanceStatus.Completed);
        var newest = await api.Http.GetFromJsonAsync<InstanceView>($"/definitions/{name}/instances/claim-8", WorkflowServiceFactory.Json, Token);
        Assert.Equal(second.Id, newest!.Id);
        using var late = await api.Http.PostAsJsonAsync($"/definitions/{name}/instances/claim-8/signals", new { name = "go" }, Token);
        await ApiClient.ProblemAsync(late, HttpStatusCode.Conflict);
    }

    [Fact]
    public async Task Signal_with_start_of_an_unknown_definition_answers_404()
    {
        var api = WithApiKey(AcmeKey);

        using var response = await SignalWithStartAsync(api, Definitions.Unique("bk-none"), "claim-7", "go");

        await ApiClient.ProblemAsync(response, HttpStatusCode.NotFound);
    }
}

public sealed class SqliteBusinessKeyApiTests : BusinessKeyApiTests<SqliteBackend>;

public sealed class PostgresBusinessKeyApiTests : BusinessKeyApiTests<PostgresBackend>;

public sealed class MongoDbBusinessKeyApiTests : BusinessKeyApiTests<MongoDbBackend>;
