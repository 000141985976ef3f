using System.Net;
using System.Net.Http.Json;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Semantics;

/// <summary>
/// Regression (found by the fault runner's disk-full row): with the embedded store's disk full, writes were answered 500.
/// SQLite's full, read-only, busy and I/O errors now mean the store is unavailable: 503 with Retry-After, reads still
/// served, and writes succeed again once there is space. The store's file lives on a small filesystem the test mounts.
/// </summary>
public sealed class DiskFullTests : ServiceTest<SqliteBackend>
{
    protected override bool UsesDefaultService => false;

    [Fact]
    public async Task With_the_disk_full_writes_are_answered_503_with_retry_after_reads_are_served_and_writes_return_with_space()
    {
        if (SmallDisk.Unavailable() is { } missing)
        {
            Backend.Unavailable($"no small disk can be mounted to fill: {missing}");
        }

        var disk = Own(await SmallDisk.MountAsync(16, TestContext.Current.CancellationToken));
        var settings = new Dictionary<string, string?>
        {
            ["Store:Provider"] = "Sqlite",
            ["Store:ConnectionString"] = $"Data Source={Path.Combine(disk.Path, "workflow.db")}",
        };
        var (_, api) = await StartServiceAsync([], database: new BackendDatabase(settings, () => Task.CompletedTask));
        await api.PublishExampleAsync("signal-roundtrip.json");
        var known = await api.StartAsync("signal-roundtrip");

        disk.Fill();
        // Each start appends to the write-ahead log; once no space is left for it, it is refused.
        HttpResponseMessage? refused = null;
        for (var i = 0; i < 500 && refused is null; i++)
        {
            var answer = await StartAsync(api.Http, $"full-{i}");
            if (answer.StatusCode == HttpStatusCode.Created)
            {
                answer.Dispose();
                continue;
            }

            refused = answer;
        }

        Assert.NotNull(refused);
        using (refused)
        {
            var problem = await ApiClient.ProblemAsync(refused, HttpStatusCode.ServiceUnavailable);
            Assert.NotNull(refused.Headers.RetryAfter);
            Assert.DoesNotContain("SQLite", problem.ToJsonString(), StringComparison.OrdinalIgnoreCase);
        }

        Assert.Equal(known.Id, (await api.GetAsync(known.Id)).Id);

        disk.Free();
        await Eventually.WaitUntilAsync(async () =>
        {
            using var answer = await StartAsync(api.Http, "after-space-returned");
            return answer.StatusCode == HttpStatusCode.Created;
        }, TimeSpan.FromSeconds(15), "a start to succeed once space returned");
    }

    private static Task<HttpResponseMessage> StartAsync(HttpClient http, string key)
    {
        var request = new HttpRequestMessage(HttpMethod.Post, "/instances") { Content = JsonContent.Create(new { definition = "signal-roundtrip" }) };
        request.Headers.Add("Idempotency-Key", key);
        return http.SendAsync(request);
    }
}
