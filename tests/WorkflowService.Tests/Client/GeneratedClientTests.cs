using System.Text.Json;
using WorkflowService.Tests.Client.Generated;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Client;

/// <summary>The NSwag-generated client, kept in step with the OpenAPI document and driven through the real pipeline.</summary>
public sealed class GeneratedClientTests : ServiceTest<SqliteBackend>
{
    [Fact]
    public async Task Generated_client_matches_the_current_openapi_document()
    {
        var generated = await ClientGeneration.GenerateAsync(await ClientGeneration.FetchDocumentAsync(Factory));
        var path = ClientGeneration.CommittedFilePath;
        var committed = File.Exists(path) ? ClientGeneration.Normalize(await File.ReadAllTextAsync(path)) : null;
        if (committed == generated)
        {
            return;
        }

        if (ClientGeneration.UpdateRequested)
        {
            await File.WriteAllTextAsync(path, generated);
            return;
        }

        Assert.Fail(
            $"{path} is out of date with the service's OpenAPI document (/openapi/v1.json). Refresh it with " +
            $"`{ClientGeneration.UpdateVariable}=1 dotnet test` from the repository root, review the diff and commit it. " +
            $"First difference at line {FirstDifferentLine(committed ?? "", generated)}.");
    }

    [Fact]
    public async Task Generated_client_drives_define_start_signal_wait_and_query()
    {
        using var http = Factory.CreateClient();
        Assert.NotNull(http.BaseAddress);
        var client = new WorkflowServiceClient(http);

        // The definition as the generated WorkflowDefinition type: each step is read as the class of its type, with that type's fields.
        var definition = JsonSerializer.Deserialize<WorkflowDefinition>(
            await File.ReadAllTextAsync(Path.Combine(AppContext.BaseDirectory, "examples", "signal-roundtrip.json")))!;
        Assert.Equal("go", Assert.IsType<WorkflowDefinitionWaitForSignalStep>(definition.Steps.First()).Signal);
        var published = await client.PublishDefinitionAsync(definition);
        Assert.Equal("signal-roundtrip", published.Name);
        Assert.Equal(1, published.Version);

        var started = await client.StartInstanceAsync(new StartInstanceRequest { Definition = "signal-roundtrip", Input = new { customer = 7 } });
        Assert.Equal(InstanceStatus.Waiting, started.Status);
        Assert.Equal(1, started.Version);
        Assert.Equal(WaitKind.Signal, started.Wait?.Kind);
        Assert.Equal("go", started.Wait?.Signal);

        var signal = await client.SendSignalAsync(started.Id, new SendSignalRequest { Name = "go", Payload = new { value = 42 } });
        Assert.Equal(started.Id, signal.InstanceId);
        Assert.Equal("go", signal.Name);

        // The long-poll of GetInstance: answers as soon as the instance completes (or ends otherwise), at most after 10 s.
        var completed = await client.GetInstanceAsync(started.Id, waitFor: [InstanceStatus.Completed], timeout: 10);
        Assert.True(completed.Status == InstanceStatus.Completed, $"instance is {completed.Status} (error: {completed.Error})");
        Assert.NotNull(completed.CompletedAt);
        Assert.Null(completed.Wait);

        var queried = await client.GetInstanceAsync(started.Id);
        Assert.Equal(InstanceStatus.Completed, queried.Status);
        var output = Assert.IsType<JsonElement>(queried.Output);
        Assert.Equal(42, output.GetProperty("result").GetProperty("value").GetInt32());
        Assert.Equal(7, Assert.IsType<JsonElement>(queried.Input).GetProperty("customer").GetInt32());

        // The history two events a page: each page's next passed back as after, until it is null.
        var history = new List<HistoryEventView>();
        string? after = null;
        do
        {
            var events = await client.GetInstanceHistoryAsync(started.Id, limit: 2, after: after);
            Assert.Equal(5, events.Total);
            history.AddRange(events.Items);
            after = events.Next;
        }
        while (after is not null && history.Count < 10);

        Assert.Equal(
            [HistoryEventType.InstanceStarted, HistoryEventType.WaitStarted, HistoryEventType.SignalReceived, HistoryEventType.StepCompleted,
                HistoryEventType.InstanceCompleted],
            history.Select(h => h.Type));
        Assert.Equal(Enumerable.Range(0, history.Count), history.Select(h => h.Sequence));

        var signals = await client.ListInstanceSignalsAsync(started.Id);
        Assert.Equal(SignalStatus.Handled, Assert.Single(signals.Items).Status);
        Assert.Null(signals.Next);
        var versions = await client.GetDefinitionAsync("signal-roundtrip");
        Assert.Equal(1, Assert.Single(versions.Items).Version);
        var page = await client.ListInstancesAsync(definition: "signal-roundtrip", status: InstanceStatus.Completed);
        Assert.Equal(definition.Steps.Select(s => s.Id), published.Definition.Steps.Select(s => s.Id));
        Assert.Equal("({ result: vars.result })", Assert.IsType<WorkflowDefinitionCompleteStep>(published.Definition.Steps.Last()).Result);
        Assert.Equal(started.Id, Assert.Single(page.Items).Id);
    }

    [Fact]
    public async Task Generated_client_surfaces_a_not_found_problem_as_an_exception()
    {
        using var http = Factory.CreateClient();
        var client = new WorkflowServiceClient(http);
        var unknown = Guid.NewGuid();

        var error = await Assert.ThrowsAsync<ApiException<ProblemDetails>>(() => client.GetInstanceAsync(unknown));

        Assert.Equal(404, error.StatusCode);
        Assert.Equal(404, error.Result.Status);
        Assert.Equal("Not found", error.Result.Title);
        Assert.Contains(unknown.ToString(), error.Result.Detail, StringComparison.Ordinal);
    }

    private static int FirstDifferentLine(string committed, string generated)
    {
        var a = committed.Split('\n');
        var b = generated.Split('\n');
        var line = 0;
        while (line < a.Length && line < b.Length && a[line] == b[line])
        {
            line++;
        }

        return line + 1;
    }
}
