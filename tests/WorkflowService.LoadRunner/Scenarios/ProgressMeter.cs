using System.Diagnostics;
using WorkflowService.Testing.Processes;

namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>Counts finished operations and prints a progress line every two seconds while a scenario runs.</summary>
internal sealed class ProgressMeter : IAsyncDisposable
{
    private static readonly TimeSpan Interval = TimeSpan.FromSeconds(2);

    private readonly string _label;
    private readonly int _total;
    private readonly int? _servicePid;
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _printer;
    private readonly long _start = Stopwatch.GetTimestamp();
    private int _done;
    private int _failed;

    public ProgressMeter(string label, int total, int? servicePid)
    {
        _label = label;
        _total = total;
        _servicePid = servicePid;
        _printer = PrintAsync();
    }

    public void Record(bool ok)
    {
        Interlocked.Increment(ref _done);
        if (!ok)
        {
            Interlocked.Increment(ref _failed);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await _printer;
        _stop.Dispose();
    }

    private async Task PrintAsync()
    {
        using var timer = new PeriodicTimer(Interval);
        var lastCpu = _servicePid is { } p ? ResourceProbe.ProcessCpuSeconds(p) : 0;
        try
        {
            while (await timer.WaitForNextTickAsync(_stop.Token))
            {
                var done = Volatile.Read(ref _done);
                var seconds = Stopwatch.GetElapsedTime(_start).TotalSeconds;
                var line = $"    {_label}: {done}/{_total} ops, {done / seconds:F0}/s, failures {Volatile.Read(ref _failed)}";
                if (_servicePid is { } pid)
                {
                    var cpu = ResourceProbe.ProcessCpuSeconds(pid);
                    line += $", service {(cpu - lastCpu) / Interval.TotalSeconds:F2} cores, RSS {ResourceProbe.StatusKilobytes(pid, "VmRSS:") / 1024} MB";
                    lastCpu = cpu;
                }

                if (_total > 0)
                {
                    Console.WriteLine(line);
                }
            }
        }
        catch (OperationCanceledException)
        {
            // Stopped.
        }
    }
}
