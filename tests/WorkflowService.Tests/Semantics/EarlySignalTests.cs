using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Semantics;

/// <summary>Signals racing the instance to its wait: each one is kept and matched, none lost.</summary>
public abstract class EarlySignalTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    // Some 5,000 requests from one caller in seconds: the per-caller rate limit (tested in ResourceLimitTests) would
    // answer some with 429 when the machine is busy, and this suite is about signals racing waits, not about limits.
    protected override Dictionary<string, string?> Settings => new() { ["RateLimiting:Enabled"] = "false" };

    [Fact]
    public async Task A_thousand_start_then_signal_pairs_with_the_second_signal_0_to_50_ms_behind_all_complete()
    {
        var name = Definitions.Unique("race");
        await Api.PublishAsync(Definitions.TwoWaits(name));
        const int pairs = 1000;
        var random = new Random(20261122);
        var gaps = Enumerable.Range(0, pairs).Select(_ => random.Next(0, 51)).ToArray();
        var next = -1;
        var ids = new Guid[pairs];

        await Task.WhenAll(Enumerable.Range(0, 16).Select(async _ =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < pairs)
            {
                var instance = await Api.StartAsync(name, new { i });
                ids[i] = instance.Id;
                // "a" resumes the instance; "b" follows 0-50 ms later, often while the run for "a" is still going and
                // before the wait for "b" is persisted.
                await Api.SignalAsync(instance.Id, "a", new { i });
                await Task.Delay(gaps[i], TestContext.Current.CancellationToken);
                await Api.SignalAsync(instance.Id, "b", new { i });
            }
        }));

        next = -1;
        var early = 0;
        await Task.WhenAll(Enumerable.Range(0, 16).Select(async _ =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < pairs)
            {
                var done = await Api.WaitForAsync(ids[i], InstanceStatus.Completed, TimeSpan.FromMinutes(2));
                Assert.Equal(i, done.Output!.Value.GetProperty("b").GetProperty("i").GetInt32());
                if ((await Api.HistoryAsync(ids[i])).Any(h => h.Type == "SignalParked"))
                {
                    Interlocked.Increment(ref early);
                }
            }
        }));

        TestContext.Current.SendDiagnosticMessage($"{early} of {pairs} second signals arrived before their wait was persisted");
    }
}

public sealed class SqliteEarlySignalTests : EarlySignalTests<SqliteBackend>;

public sealed class PostgresEarlySignalTests : EarlySignalTests<PostgresBackend>;

public sealed class MongoDbEarlySignalTests : EarlySignalTests<MongoDbBackend>;
