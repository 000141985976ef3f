using System.Diagnostics;

namespace WorkflowService.FaultRunner;

/// <summary>
/// The load a fault row runs under: the two-signal workload (<see cref="TwoSignalLoad"/>) on its own workers, starting
/// new workflows until the scenario says its faults are over, every acknowledged call in its <see cref="Ledger"/>.
/// </summary>
internal sealed class LoadUnderFault : IDisposable
{
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private readonly Task _running;
    private int _faulting = 1;

    public LoadUnderFault(FaultContext context, ServiceNodes nodes, string runId, int concurrency)
    {
        Client = new FaultClient(nodes, Ledger, context.ApiKey.Key, concurrency);
        Load = new TwoSignalLoad(Client, runId);
        _running = Load.RunAsync(concurrency, int.MaxValue, () => Volatile.Read(ref _faulting) == 1, copies: 1, context.Cancellation);
    }

    public Ledger Ledger { get; } = new();

    /// <summary>The load's client, for the scenario's own calls (recorded in the same ledger).</summary>
    public FaultClient Client { get; }

    public TwoSignalLoad Load { get; }

    /// <summary>Starts no new workflow and waits for those under way; returns how long the load ran.</summary>
    public async Task<TimeSpan> StopAsync()
    {
        Volatile.Write(ref _faulting, 0);
        await _running;
        return _clock.Elapsed;
    }

    public void Dispose() => Client.Dispose();
}
