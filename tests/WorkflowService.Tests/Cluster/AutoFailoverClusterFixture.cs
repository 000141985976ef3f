using WorkflowService.Tests.Infrastructure;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Cluster;

/// <summary>
/// A pg_auto_failover cluster one test class owns (started once for the class, thrown away after it), or why this
/// machine cannot own one: then each test skips with the reason, or fails where WORKFLOW_TESTS_REQUIRE_TOOLS names it.
/// </summary>
public abstract class AutoFailoverClusterFixture : IAsyncLifetime
{
    private readonly AutoFailoverOptions _options;
    private string? _missing;
    private OwnedAutoFailoverCluster? _cluster;

    private protected AutoFailoverClusterFixture(AutoFailoverOptions options) => _options = options;

    /// <summary>The cluster, once the test has made sure it exists (<see cref="SkipUnlessOwned"/>).</summary>
    private protected OwnedAutoFailoverCluster Cluster => _cluster ?? throw new InvalidOperationException("no cluster: call SkipUnlessOwned first");

    /// <summary>Skips the calling test (or fails it, where required) when the machine cannot own a cluster.</summary>
    private protected void SkipUnlessOwned()
    {
        if (_missing is not null)
        {
            ExternalTools.Unavailable(OwnedAutoFailoverCluster.Tool, _missing);
        }
    }

    public async ValueTask InitializeAsync()
    {
        _missing = OwnedAutoFailoverCluster.Unavailable();
        if (_missing is null)
        {
            _cluster = await OwnedAutoFailoverCluster.StartAsync(_options, TestContext.Current.CancellationToken);
            await StartedAsync(_cluster, TestContext.Current.CancellationToken);
        }
    }

    /// <summary>What the class does on the cluster once it runs, before its tests (nothing by default).</summary>
    private protected virtual Task StartedAsync(OwnedAutoFailoverCluster cluster, CancellationToken ct) => Task.CompletedTask;

    /// <summary>Stops what <see cref="StartedAsync"/> started, before the cluster goes.</summary>
    protected virtual ValueTask StopAsync() => ValueTask.CompletedTask;

    public async ValueTask DisposeAsync()
    {
        await StopAsync();
        if (_cluster is not null)
        {
            await _cluster.DisposeAsync();
        }

        GC.SuppressFinalize(this);
    }
}
