using System.Net;
using System.Net.Http.Json;
using WorkflowService.Api;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Events;

/// <summary>
/// Events out, end to end on a real store: each test subscribes a receiver on loopback to the events of a definition of
/// its own, drives instances through the API, and reads what the receiver got — once each, signed (checked by the
/// receiver's own verifier), in commit order per instance — and what the delivery log says.
/// </summary>
public abstract class EventDeliveryTests<TBackend> : SharedServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private const int MaxAttempts = 4;

    private EventReceiver _receiver = null!;

    /// <summary>The service's settings for the suite; a subclass may hand deliveries over (Events:HandOverCapacity).</summary>
    protected virtual int HandOverCapacity => 0;

    protected override Dictionary<string, string?> Settings => new()
    {
        ["Events:HandOverCapacity"] = HandOverCapacity.ToString(System.Globalization.CultureInfo.InvariantCulture),
        ["Events:FirstRetryDelay"] = "00:00:00.020",
        ["Events:MaxRetryDelay"] = "00:00:00.100",
        ["Events:AttemptTimeout"] = "00:00:02",
        ["Events:MaxAttempts"] = MaxAttempts.ToString(System.Globalization.CultureInfo.InvariantCulture),
        ["Events:PollInterval"] = "00:00:00.200",
        ["Engine:MaxAttempts"] = "2",
        ["Engine:RetryBackoff"] = "00:00:00.010",
    };

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    public override async ValueTask InitializeAsync()
    {
        await base.InitializeAsync();
        _receiver = await EventReceiver.StartAsync();
        Own(_receiver);
    }

    private static string Review(string name) => $$"""
        {
          "name": "{{name}}",
          "steps": [
            { "id": "review", "type": "humanTask", "title": "Review the claim", "output": "review" },
            { "id": "decide", "type": "decision", "branches": [ { "when": "vars.review.approve", "next": "done" } ], "otherwise": "reject" },
            { "id": "reject", "type": "fail", "reason": "'rejected'" },
            { "id": "done", "type": "complete", "result": "({ approved: true })" }
          ]
        }
        """;

    private Task<SubscriptionWithSecretView> SubscribeAsync(string route, string definition, string[]? events = null) =>
        _receiver.SubscribeAsync(Api, route, definition, events);

    private async Task CompleteTaskAsync(Guid instanceId, bool approve, bool claimFirst = false)
    {
        var tasks = await Api.EveryPageAsync<TaskView>($"/tasks?instanceId={instanceId}&status=Open");
        var task = Assert.Single(tasks);
        if (claimFirst)
        {
            using var claim = await Api.Http.PostAsJsonAsync($"/tasks/{task.Id}/claim", new { user = "reviewer" }, WorkflowServiceFactory.Json, Token);
            Assert.True(claim.IsSuccessStatusCode, await claim.Content.ReadAsStringAsync(Token));
        }

        using var response = await Api.Http.PostAsJsonAsync($"/tasks/{task.Id}/complete", new { user = "reviewer", result = new { approve } },
            WorkflowServiceFactory.Json, Token);
        Assert.True(response.IsSuccessStatusCode, await response.Content.ReadAsStringAsync(Token));
    }

    private async Task<IReadOnlyList<EventReceiver.Received>> ReceivedAsync(string name, int count)
    {
        await Eventually.WaitUntilAsync(() => _receiver.Of(name).Count >= count, what: $"{count} deliveries to {name}");
        return _receiver.Of(name);
    }

    /// <summary>The events of one instance the receiver got, in arrival order, are these (each once).</summary>
    private static void AssertTypes(IReadOnlyList<EventReceiver.Received> received, Guid instanceId, params string[] expected)
    {
        var mine = received.Where(r => r.InstanceId == instanceId.ToString()).ToList();
        Assert.True(mine.Select(r => r.Type).SequenceEqual(expected),
            $"expected {string.Join(", ", expected)}; got " + string.Join("; ", mine.Select(r => $"{r.Type} id {r.Id} event {(string?)r.Event["id"]} at {(string?)r.Event["time"]}")));
    }

    private async Task ResumeAsync(Guid subscriptionId)
    {
        using var resume = await Api.Http.PostAsync($"/subscriptions/{subscriptionId}/resume", null, Token);
        Assert.True(resume.IsSuccessStatusCode, await resume.Content.ReadAsStringAsync(Token));
    }

    /// <summary>
    /// A paused subscription of <paramref name="route"/> to instance.started of <paramref name="definition"/>, taking batches
    /// of ten; three instances whose deliveries wait for it; then the resume, which makes the three due together.
    /// </summary>
    private async Task<(SubscriptionWithSecretView Subscription, InstanceView[] Instances)> ThreeWaitingThenResumedAsync(string route, string definition)
    {
        await Api.PublishAsync(Definitions.SignalRoundtrip(definition));
        var subscription = await _receiver.SubscribeAsync(Api, route, definition, [EventTypes.InstanceStarted], maxEventsPerBatch: 10, enabled: false);
        var instances = await Task.WhenAll(Enumerable.Range(0, 3).Select(_ => Api.StartAsync(definition)));
        await Eventually.WaitUntilAsync(async () => (await LogAsync(subscription.Subscription.Id)).Count == 3, what: "three deliveries recorded");
        await ResumeAsync(subscription.Subscription.Id);
        return (subscription, instances);
    }

    private async Task<IReadOnlyList<DeliveryView>> LogAsync(Guid subscriptionId) =>
        await Api.EveryPageAsync<DeliveryView>($"/subscriptions/{subscriptionId}/deliveries?limit=500");

    [Fact]
    public async Task Each_event_of_an_instances_life_is_delivered_once_signed_and_in_commit_order()
    {
        var definition = Definitions.Unique("review");
        await Api.PublishAsync(Review(definition));
        var subscription = await SubscribeAsync($"/ok/{definition}", definition);
        var approved = await Api.StartAsync(definition, businessKey: "claim-1");
        await CompleteTaskAsync(approved.Id, approve: true, claimFirst: true);
        await Api.WaitForAsync(approved.Id, InstanceStatus.Completed);
        var rejected = await Api.StartAsync(definition);
        await CompleteTaskAsync(rejected.Id, approve: false);
        await Api.WaitForAsync(rejected.Id, InstanceStatus.Failed);

        var received = await ReceivedAsync(definition, 9);
        Assert.All(received, r => Assert.True(r.SignedWith(subscription.Secret), $"{r.Type} is not signed with the subscription's secret"));
        Assert.All(received, r => Assert.StartsWith("application/cloudevents+json", r.ContentType, StringComparison.Ordinal));
        Assert.Equal(received.Count, received.Select(r => r.Id).Distinct().Count());
        AssertTypes(received, approved.Id, EventTypes.InstanceStarted, EventTypes.TaskCreated, EventTypes.TaskClaimed, EventTypes.TaskCompleted,
            EventTypes.InstanceCompleted);
        Assert.Equal("reviewer", (string?)received.Single(r => r.Type == EventTypes.TaskClaimed).Event["data"]!["claimedBy"]);
        AssertTypes(received, rejected.Id, EventTypes.InstanceStarted, EventTypes.TaskCreated, EventTypes.TaskCompleted, EventTypes.InstanceFailed);

        var completed = received.Single(r => r.Type == EventTypes.InstanceCompleted).Event;
        Assert.Equal("1.0", (string?)completed["specversion"]);
        Assert.Equal($"/instances/{approved.Id}", (string?)completed["source"]);
        Assert.Equal((definition, "1", "claim-1"), ((string?)completed["workflowdefinition"], (string?)completed["workflowversion"],
            (string?)completed["workflowbusinesskey"]));
        Assert.True((bool)completed["data"]!["output"]!["approved"]!);
        Assert.Equal("rejected", (string?)received.Single(r => r.Type == EventTypes.InstanceFailed).Event["data"]!["error"]);

        // The receiver answers before the dispatcher settles: wait for the settlements, then check them.
        await Eventually.WaitUntilAsync(async () => (await LogAsync(subscription.Subscription.Id)).Count(d => d.Status != DeliveryStatus.Pending) >= 9,
            what: "nine settled deliveries");
        var log = await LogAsync(subscription.Subscription.Id);
        Assert.Equal(9, log.Count);
        Assert.All(log, d => Assert.Equal((DeliveryStatus.Delivered, 1, (int?)200), (d.Status, d.Attempts, d.LastStatus)));
        Assert.All(log, d => Assert.NotNull(d.LatencyMs));
    }

    [Fact]
    public async Task An_emit_step_sends_its_custom_event_with_its_data_with_the_commit_after_it()
    {
        var definition = Definitions.Unique("emit");
        await Api.PublishAsync($$"""
            {
              "name": "{{definition}}",
              "steps": [
                { "id": "tell", "type": "emit", "event": "'claim.' + input.outcome", "data": "({ claim: input.claim })" },
                { "id": "wait", "type": "waitForSignal", "signal": "go" },
                { "id": "done", "type": "complete" }
              ]
            }
            """);
        var subscription = await SubscribeAsync($"/ok/{definition}", definition, ["claim.approved"]);
        var instance = await Api.StartAsync(definition, new { outcome = "approved", claim = "C-7" });
        var custom = Assert.Single(await ReceivedAsync(definition, 1));
        Assert.Equal(("claim.approved", instance.Id.ToString(), "tell"), (custom.Type, custom.InstanceId, (string?)custom.Event["subject"]));
        Assert.Equal("C-7", (string?)custom.Event["data"]!["claim"]);
        Assert.True(custom.SignedWith(subscription.Secret));

        // A type computed into the service's own namespace fails the step (it is told, like any failed expression).
        await Api.PublishAsync($$"""
            {
              "name": "{{definition}}",
              "steps": [
                { "id": "tell", "type": "emit", "event": "'instance.' + input.outcome", "onError": "caught", "errorOutput": "problem" },
                { "id": "done", "type": "complete", "result": "vars.problem" },
                { "id": "caught", "type": "complete", "result": "vars.problem" }
              ]
            }
            """);
        var refused = await Api.StartAsync(definition, new { outcome = "approved" });
        var ended = await Api.WaitForAsync(refused.Id, InstanceStatus.Completed);
        Assert.Contains("'instance.' names the service's own events", ended.Output!.Value.GetProperty("message").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task An_emit_step_without_data_sends_its_event_without_any()
    {
        var definition = Definitions.Unique("emit-bare");
        await Api.PublishAsync($$"""
            {
              "name": "{{definition}}",
              "steps": [
                { "id": "tell", "type": "emit", "event": "'claim.noted'" },
                { "id": "done", "type": "complete" }
              ]
            }
            """);
        var subscription = await SubscribeAsync($"/ok/{definition}", definition, ["claim.noted"]);
        var instance = await Api.StartAsync(definition);
        await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        var bare = Assert.Single(await ReceivedAsync(definition, 1));
        Assert.Equal(("claim.noted", instance.Id.ToString()), (bare.Type, bare.InstanceId));
        Assert.False(bare.Event.ContainsKey("data"));
        Assert.True(bare.SignedWith(subscription.Secret));
    }

    [Fact]
    public async Task Operator_actions_and_faults_are_delivered_as_their_own_events()
    {
        var definition = Definitions.Unique("ops");
        await Api.PublishAsync(Definitions.FaultsAfterGo(definition));
        var subscription = await SubscribeAsync($"/ok/{definition}", definition,
            [EventTypes.InstanceSuspended, EventTypes.InstanceResumed, EventTypes.InstanceCancelled, EventTypes.InstanceTerminated,
             EventTypes.InstanceFaulted, EventTypes.SignalDeadLettered]);
        var held = await Api.StartAsync(definition);
        foreach (var action in new[] { "suspend", "resume", "cancel" })
        {
            using var response = await Api.Http.PostAsJsonAsync($"/instances/{held.Id}/{action}", new { reason = action }, WorkflowServiceFactory.Json, Token);
            Assert.True(response.IsSuccessStatusCode, await response.Content.ReadAsStringAsync(Token));
        }

        var terminated = await Api.StartAsync(definition);
        using (var response = await Api.Http.PostAsJsonAsync($"/instances/{terminated.Id}/terminate", new { reason = "stop" }, WorkflowServiceFactory.Json, Token))
        {
            Assert.True(response.IsSuccessStatusCode, await response.Content.ReadAsStringAsync(Token));
        }

        var faulted = await Api.StartAsync(definition);
        await Api.SignalAsync(faulted.Id, "go");
        await Api.WaitForAsync(faulted.Id, InstanceStatus.Faulted);

        var received = await ReceivedAsync(definition, 6);
        AssertTypes(received, held.Id, EventTypes.InstanceSuspended, EventTypes.InstanceResumed, EventTypes.InstanceCancelled);
        AssertTypes(received, terminated.Id, EventTypes.InstanceTerminated);
        AssertTypes(received, faulted.Id, EventTypes.InstanceFaulted, EventTypes.SignalDeadLettered);
        Assert.All(received, r => Assert.True(r.SignedWith(subscription.Secret)));
    }

    [Fact]
    public async Task Events_of_many_instances_at_once_reach_the_receiver_in_commit_order_per_instance()
    {
        var definition = Definitions.Unique("many");
        await Api.PublishAsync(Definitions.TwoWaits(definition));
        await SubscribeAsync($"/ok/{definition}", definition);
        var instances = await Task.WhenAll(Enumerable.Range(0, 12).Select(_ => Api.StartAsync(definition)));
        await Task.WhenAll(instances.Select(async i =>
        {
            await Api.SignalAsync(i.Id, "a");
            await Api.SignalAsync(i.Id, "b");
        }));

        var received = await ReceivedAsync(definition, instances.Length * 2);
        foreach (var instance in instances)
        {
            AssertTypes(received, instance.Id, EventTypes.InstanceStarted, EventTypes.InstanceCompleted);
        }
    }

    [Fact]
    public async Task A_subscription_that_takes_batches_gets_the_events_due_together_in_signed_batches_each_once_in_order_per_instance()
    {
        var definition = Definitions.Unique("batches");
        await Api.PublishAsync(Definitions.TwoWaits(definition));
        // Paused while the instances run, so that all their events are due together when it is resumed.
        var subscription = await _receiver.SubscribeAsync(Api, $"/ok/{definition}", definition, maxEventsPerBatch: 10, enabled: false);
        Assert.Equal(10, subscription.Subscription.MaxEventsPerBatch);
        // Beside it a subscription that takes each event alone: claimed with the batches, posted one by one.
        var single = await _receiver.SubscribeAsync(Api, $"/ok/{definition}-single", definition, enabled: false);
        Assert.Equal(1, single.Subscription.MaxEventsPerBatch);
        var instances = await Task.WhenAll(Enumerable.Range(0, 12).Select(_ => Api.StartAsync(definition)));
        await Task.WhenAll(instances.Select(async i =>
        {
            await Api.SignalAsync(i.Id, "a");
            await Api.SignalAsync(i.Id, "b");
            await Api.WaitForAsync(i.Id, InstanceStatus.Completed);
        }));
        await ResumeAsync(subscription.Subscription.Id);
        await ResumeAsync(single.Subscription.Id);

        await Eventually.WaitUntilAsync(() => _receiver.Of(definition).Sum(r => r.Events.Count) >= 24, what: "24 events in batches");
        var singles = await ReceivedAsync($"{definition}-single", 24);
        Assert.All(singles, r => Assert.StartsWith("application/cloudevents+json", r.ContentType, StringComparison.Ordinal));
        Assert.Equal(24, singles.Select(r => r.Id).Distinct().Count());
        var requests = _receiver.Of(definition);
        Assert.All(requests, r =>
        {
            Assert.StartsWith("application/cloudevents-batch+json", r.ContentType, StringComparison.Ordinal);
            Assert.StartsWith("batch_", r.Id, StringComparison.Ordinal);
            Assert.True(r.SignedWith(subscription.Secret), "a batch is not signed with the subscription's secret");
            Assert.InRange(r.Events.Count, 1, 10);
        });
        // The twelve instances' first events were due together: a claim takes them at once, and they fill a batch of ten.
        Assert.Equal(10, requests.Max(r => r.Events.Count));
        Assert.Equal(requests.Count, requests.Select(r => r.Id).Distinct().Count());

        var events = requests.SelectMany(r => r.Events).ToList();
        Assert.Equal(24, events.Select(e => (string?)e["id"]).Distinct().Count());
        Assert.Equal(24, events.Count);
        foreach (var instance in instances)
        {
            Assert.Equal([EventTypes.InstanceStarted, EventTypes.InstanceCompleted],
                events.Where(e => (string?)e["workflowinstanceid"] == instance.Id.ToString()).Select(e => (string?)e["type"]));
        }

        await Eventually.WaitUntilAsync(async () => (await LogAsync(subscription.Subscription.Id)).Count(d => d.Status == DeliveryStatus.Delivered) == 24,
            what: "24 settled deliveries");
        Assert.All(await LogAsync(subscription.Subscription.Id), d => Assert.Equal((1, (int?)200), (d.Attempts, d.LastStatus)));
    }

    [Fact]
    public async Task Events_of_many_instances_at_once_to_a_subscription_that_takes_batches_arrive_each_once_in_order_per_instance()
    {
        // Active from the start: with the hand-over on (the HandOver suites), commits hand their deliveries over and the
        // dispatcher batches what it takes; with it off, what each claim finds. Either way nothing is lost, doubled or reordered.
        var definition = Definitions.Unique("many-batched");
        await Api.PublishAsync(Definitions.TwoWaits(definition));
        var subscription = await _receiver.SubscribeAsync(Api, $"/ok/{definition}", definition, maxEventsPerBatch: 5);
        var instances = await Task.WhenAll(Enumerable.Range(0, 16).Select(_ => Api.StartAsync(definition)));
        await Task.WhenAll(instances.Select(async i =>
        {
            await Api.SignalAsync(i.Id, "a");
            await Api.SignalAsync(i.Id, "b");
        }));

        await Eventually.WaitUntilAsync(() => _receiver.Of(definition).Sum(r => r.Events.Count) >= instances.Length * 2, what: "every event");
        var requests = _receiver.Of(definition);
        Assert.All(requests, r => Assert.InRange(r.Events.Count, 1, 5));
        var events = requests.SelectMany(r => r.Events).ToList();
        Assert.Equal(instances.Length * 2, events.Select(e => (string?)e["id"]).Distinct().Count());
        foreach (var instance in instances)
        {
            Assert.Equal([EventTypes.InstanceStarted, EventTypes.InstanceCompleted],
                events.Where(e => (string?)e["workflowinstanceid"] == instance.Id.ToString()).Select(e => (string?)e["type"]));
        }

        await Eventually.WaitUntilAsync(async () => (await LogAsync(subscription.Subscription.Id)).Count(d => d.Status == DeliveryStatus.Delivered)
            == instances.Length * 2, what: "every delivery settled");
        Assert.Equal(instances.Length * 2, events.Count);
    }

    [Fact]
    public async Task A_batch_the_receiver_fails_is_retried_event_by_event_each_under_its_own_id()
    {
        var definition = Definitions.Unique("flaky-batch");
        // The receiver fails the first attempt of each webhook-id.
        var (subscription, instances) = await ThreeWaitingThenResumedAsync($"/flaky/{definition}/1", definition);

        // One batch of the three, refused; then each event alone (a batch of one), refused once under its own id, then taken.
        var received = await ReceivedAsync(definition, 7);
        var batch = received[0];
        Assert.Equal(503, batch.Answered);
        Assert.StartsWith("batch_", batch.Id, StringComparison.Ordinal);
        Assert.Equal(instances.Select(i => i.Id.ToString()).Order(), batch.Events.Select(e => (string)e["workflowinstanceid"]!).Order());
        var alone = received.Skip(1).ToList();
        Assert.Equal(6, alone.Count);
        Assert.All(alone, r =>
        {
            Assert.StartsWith("application/cloudevents-batch+json", r.ContentType, StringComparison.Ordinal);
            Assert.Single(r.Events);
            Assert.True(r.SignedWith(subscription.Secret), "a retried event is not signed with the subscription's secret");
        });
        foreach (var instance in instances)
        {
            var mine = alone.Where(r => (string?)r.Events[0]["workflowinstanceid"] == instance.Id.ToString()).ToList();
            Assert.Equal([503, 200], mine.Select(r => r.Answered));
            Assert.Single(mine.Select(r => r.Id).Distinct());
        }

        await Eventually.WaitUntilAsync(async () => (await LogAsync(subscription.Subscription.Id)).All(d => d.Status == DeliveryStatus.Delivered),
            what: "three delivered");
        Assert.All(await LogAsync(subscription.Subscription.Id), d => Assert.Equal((3, (int?)200), (d.Attempts, d.LastStatus)));
        Assert.Equal(7, _receiver.Of(definition).Count);
    }

    [Fact]
    public async Task A_batch_answered_410_pauses_the_subscription_once_and_its_events_wait_for_the_resume()
    {
        var definition = Definitions.Unique("gone-batch");
        var (subscription, _) = await ThreeWaitingThenResumedAsync($"/gone/{definition}", definition);
        var id = subscription.Subscription.Id;

        await Eventually.WaitUntilAsync(async () => (await Api.Http.GetFromJsonAsync<SubscriptionView>($"/subscriptions/{id}",
            WorkflowServiceFactory.Json, Token))!.Status == SubscriptionView.Paused, what: "the subscription paused");
        var paused = (await Api.Http.GetFromJsonAsync<SubscriptionView>($"/subscriptions/{id}", WorkflowServiceFactory.Json, Token))!;
        Assert.Equal("the receiver answered 410 Gone", paused.PausedReason);
        // Made (1), resumed (2), paused once by the one request that carried the three events (3).
        Assert.Equal(3, paused.Version);
        var gone = Assert.Single(_receiver.Of(definition));
        Assert.Equal(3, gone.Events.Count);
        Assert.All(await LogAsync(id), d => Assert.Equal(DeliveryStatus.Pending, d.Status));

        using (var change = await Api.Http.PutAsJsonAsync($"/subscriptions/{id}",
            new { name = paused.Name, endpoint = new Uri(_receiver.Address, $"/ok/{definition}-back").ToString(), events = paused.Events,
                  definitions = paused.Definitions, maxEventsPerBatch = 10 }, WorkflowServiceFactory.Json, Token))
        {
            Assert.True(change.IsSuccessStatusCode, await change.Content.ReadAsStringAsync(Token));
        }

        await ResumeAsync(id);

        await Eventually.WaitUntilAsync(() => _receiver.Of($"{definition}-back").Sum(r => r.Events.Count) >= 3, what: "the three events after the resume");
        Assert.Equal(3, _receiver.Of($"{definition}-back").SelectMany(r => r.Events).Select(e => (string?)e["id"]).Distinct().Count());
        await Eventually.WaitUntilAsync(async () => (await LogAsync(id)).All(d => d.Status == DeliveryStatus.Delivered), what: "three delivered");
    }

    [Fact]
    public async Task A_receiver_that_fails_a_few_times_gets_the_event_with_the_same_id_until_it_answers_2xx()
    {
        var definition = Definitions.Unique("flaky");
        await Api.PublishAsync(Definitions.SignalRoundtrip(definition));
        var subscription = await SubscribeAsync($"/flaky/{definition}/2", definition, [EventTypes.InstanceStarted]);
        await Api.StartAsync(definition);

        var received = await ReceivedAsync(definition, 3);
        Assert.Equal([503, 503, 200], received.Select(r => r.Answered));
        Assert.Single(received.Select(r => r.Id).Distinct());
        await Eventually.WaitUntilAsync(async () => (await LogAsync(subscription.Subscription.Id)) is [{ Status: DeliveryStatus.Delivered }]);
        var delivery = Assert.Single(await LogAsync(subscription.Subscription.Id));
        Assert.Equal((3, (int?)200), (delivery.Attempts, delivery.LastStatus));
    }

    [Fact]
    public async Task A_receiver_that_never_answers_gets_bounded_attempts_then_a_dead_letter_that_a_replay_delivers()
    {
        var definition = Definitions.Unique("silent");
        await Api.PublishAsync(Definitions.SignalRoundtrip(definition));
        var subscription = await SubscribeAsync($"/silent/{definition}", definition, [EventTypes.InstanceStarted]);
        var id = subscription.Subscription.Id;
        await Api.StartAsync(definition);

        await Eventually.WaitUntilAsync(async () => (await LogAsync(id)) is [{ Status: DeliveryStatus.DeadLettered }], what: "a dead letter");
        var dead = Assert.Single(await LogAsync(id));
        Assert.Equal(MaxAttempts, dead.Attempts);
        Assert.Equal(MaxAttempts, _receiver.Of(definition).Count);
        Assert.Contains("no answer", dead.LastError, StringComparison.Ordinal);

        // The receiver is mended (a new endpoint), and the dead letter is replayed: delivered, under the same id.
        using (var change = await Api.Http.PutAsJsonAsync($"/subscriptions/{id}",
            new { name = subscription.Subscription.Name, endpoint = new Uri(_receiver.Address, $"/ok/{definition}-mended").ToString(),
                  events = new[] { EventTypes.InstanceStarted }, definitions = new[] { definition } }, WorkflowServiceFactory.Json, Token))
        {
            Assert.True(change.IsSuccessStatusCode, await change.Content.ReadAsStringAsync(Token));
        }

        using (var replay = await Api.Http.PostAsync($"/subscriptions/{id}/deliveries/{dead.Id}/replay", null, Token))
        {
            Assert.True(replay.IsSuccessStatusCode, await replay.Content.ReadAsStringAsync(Token));
        }

        var mended = Assert.Single(await ReceivedAsync($"{definition}-mended", 1));
        Assert.Equal(dead.Id.ToString(), mended.Id);
        using var again = await Api.Http.PostAsync($"/subscriptions/{id}/deliveries/{dead.Id}/replay", null, Token);
        Assert.Equal(HttpStatusCode.NotFound, again.StatusCode);
    }

    [Fact]
    public async Task A_receiver_that_answers_410_pauses_its_subscription_and_its_events_wait_for_the_resume()
    {
        var definition = Definitions.Unique("gone");
        await Api.PublishAsync(Definitions.SignalRoundtrip(definition));
        var subscription = await SubscribeAsync($"/gone/{definition}", definition, [EventTypes.InstanceStarted, EventTypes.InstanceCompleted]);
        var id = subscription.Subscription.Id;
        var instance = await Api.StartAsync(definition);
        await Eventually.WaitUntilAsync(async () => (await Api.Http.GetFromJsonAsync<SubscriptionView>($"/subscriptions/{id}",
            WorkflowServiceFactory.Json, Token))!.Status == SubscriptionView.Paused, what: "the subscription paused");
        var paused = (await Api.Http.GetFromJsonAsync<SubscriptionView>($"/subscriptions/{id}", WorkflowServiceFactory.Json, Token))!;
        Assert.Equal("the receiver answered 410 Gone", paused.PausedReason);

        // While it is paused, events are recorded and wait.
        await Api.SignalAsync(instance.Id, "go");
        await Api.WaitForAsync(instance.Id, InstanceStatus.Completed);
        await Eventually.WaitUntilAsync(async () => (await LogAsync(id)).Count == 2, what: "two deliveries recorded");
        Assert.All(await LogAsync(id), d => Assert.Equal(DeliveryStatus.Pending, d.Status));

        using (var change = await Api.Http.PutAsJsonAsync($"/subscriptions/{id}",
            new { name = paused.Name, endpoint = new Uri(_receiver.Address, $"/ok/{definition}-back").ToString(), events = paused.Events,
                  definitions = paused.Definitions }, WorkflowServiceFactory.Json, Token))
        {
            Assert.True(change.IsSuccessStatusCode, await change.Content.ReadAsStringAsync(Token));
        }

        await ResumeAsync(id);

        var back = await ReceivedAsync($"{definition}-back", 2);
        Assert.Equal([EventTypes.InstanceStarted, EventTypes.InstanceCompleted], back.Select(r => r.Type));
        Assert.Single(_receiver.Of(definition));
    }

    [Fact]
    public async Task A_secret_rotated_while_events_flow_signs_with_both_during_the_overlap()
    {
        var definition = Definitions.Unique("rotate");
        await Api.PublishAsync(Definitions.SignalRoundtrip(definition));
        var subscription = await SubscribeAsync($"/ok/{definition}", definition, [EventTypes.InstanceStarted]);
        await Api.StartAsync(definition);
        var before = Assert.Single(await ReceivedAsync(definition, 1));

        using var rotate = await Api.Http.PostAsJsonAsync($"/subscriptions/{subscription.Subscription.Id}/secret", new { overlapSeconds = 3600 },
            WorkflowServiceFactory.Json, Token);
        var rotated = (await rotate.Content.ReadFromJsonAsync<SubscriptionWithSecretView>(WorkflowServiceFactory.Json, Token))!;
        await Api.StartAsync(definition);
        var during = (await ReceivedAsync(definition, 2))[1];

        using var end = await Api.Http.PostAsJsonAsync($"/subscriptions/{subscription.Subscription.Id}/secret", new { overlapSeconds = 0 },
            WorkflowServiceFactory.Json, Token);
        var ended = (await end.Content.ReadFromJsonAsync<SubscriptionWithSecretView>(WorkflowServiceFactory.Json, Token))!;
        await Api.StartAsync(definition);
        var after = (await ReceivedAsync(definition, 3))[2];

        Assert.True(before.SignedWith(subscription.Secret));
        Assert.True(during.SignedWith(subscription.Secret) && during.SignedWith(rotated.Secret), "both secrets sign during the overlap");
        Assert.True(after.SignedWith(ended.Secret));
        Assert.False(after.SignedWith(rotated.Secret) || after.SignedWith(subscription.Secret), "an ended overlap signs with the new secret only");
    }
}

public sealed class SqliteEventDeliveryTests : EventDeliveryTests<SqliteBackend>;

public sealed class PostgresEventDeliveryTests : EventDeliveryTests<PostgresBackend>;

/// <summary>The same suite with the hand-over on: each commit's first delivery per subscription leased to its node and posted from memory.</summary>
public sealed class SqliteHandOverEventDeliveryTests : EventDeliveryTests<SqliteBackend>
{
    protected override int HandOverCapacity => 1_024;
}

/// <summary>As <see cref="SqliteHandOverEventDeliveryTests"/>, on PostgreSQL.</summary>
public sealed class PostgresHandOverEventDeliveryTests : EventDeliveryTests<PostgresBackend>
{
    protected override int HandOverCapacity => 1_024;
}

public sealed class MongoDbEventDeliveryTests : EventDeliveryTests<MongoDbBackend>;
