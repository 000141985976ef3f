using System.Net;
using System.Net.Http.Json;
using Microsoft.Data.Sqlite;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Semantics;

/// <summary>
/// Regression (found by the fault runner's read-only-file row): the embedded store's filesystem turned read-only under
/// load (as ext4 does after an error), and once it was repaired, starts and signals the service had acknowledged just
/// before were gone: with synchronous=NORMAL a commit reaches the disk only at the next checkpoint. The default is now
/// FULL (every acknowledged commit is on the disk). While the filesystem is read-only, writes are answered 503 with
/// Retry-After and reads are served. The filesystem is ext4 on a loop device the test mounts (errors=remount-ro).
/// </summary>
public sealed class ReadOnlyFilesystemTests : ServiceTest<SqliteBackend>
{
    protected override bool UsesDefaultService => false;

    [Fact]
    public async Task A_filesystem_turned_read_only_refuses_writes_with_503_serves_reads_and_loses_nothing_acknowledged()
    {
        var ct = TestContext.Current.CancellationToken;
        // What the machine lacks (loop devices in a container), not the backend: a skip with the reason, or a failure
        // where CI lists loop-device in WORKFLOW_TESTS_REQUIRE_TOOLS.
        if (ReadOnlyDisk.Unavailable() is { } missing)
        {
            ExternalTools.Unavailable(ReadOnlyDisk.Tool, $"no filesystem to turn read-only on this machine: {missing}");
        }

        var disk = Own(await ReadOnlyDisk.MountAsync(32, ct));
        // The service's default durability: no Store:SqliteSynchronous here.
        var database = new BackendDatabase(new Dictionary<string, string?>
        {
            ["Store:Provider"] = "Sqlite",
            ["Store:ConnectionString"] = $"Data Source={Path.Combine(disk.Path, "workflow.db")}",
        }, () => Task.CompletedTask);
        var (first, api) = await StartServiceAsync([], database: database);
        await api.PublishExampleAsync("signal-roundtrip.json");
        var started = new List<Guid>();
        for (var i = 0; i < 40; i++)
        {
            var instance = await api.StartAsync("signal-roundtrip");
            started.Add(instance.Id);
            if (i % 2 == 0)
            {
                await api.SignalAsync(instance.Id, "go", new { value = i });
            }
        }

        disk.TurnReadOnly();
        Assert.True(disk.IsReadOnly, "the kernel did not remount the filesystem read-only");

        using (var refused = await api.Http.PostAsJsonAsync("/instances", new { definition = "signal-roundtrip" }, ct))
        {
            var problem = await ApiClient.ProblemAsync(refused, HttpStatusCode.ServiceUnavailable);
            Assert.NotNull(refused.Headers.RetryAfter);
            Assert.DoesNotContain("SQLite", problem.ToJsonString(), StringComparison.OrdinalIgnoreCase);
        }

        Assert.Equal(started[^1], (await api.GetAsync(started[^1])).Id);

        // The operator's repair: the service lets go of the file (and of this process's pooled connections to it), the
        // filesystem is checked and mounted again, and the service starts on it.
        await first.DisposeAsync();
        SqliteConnection.ClearAllPools();
        await disk.RepairAsync(ct);
        var (_, again) = await StartServiceAsync([], database: database);

        foreach (var (id, i) in started.Select((id, i) => (id, i)))
        {
            Assert.Equal(i % 2 == 0 ? InstanceStatus.Completed : InstanceStatus.Waiting,
                (await again.WaitForAsync(id, i % 2 == 0 ? InstanceStatus.Completed : InstanceStatus.Waiting)).Status);
        }

        Assert.Equal(InstanceStatus.Waiting, (await again.StartAsync("signal-roundtrip")).Status);
    }
}
