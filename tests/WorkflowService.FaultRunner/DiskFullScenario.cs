using System.Diagnostics;
using System.Globalization;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 11: the embedded store's disk fills up under load (its file on a small filesystem of the runner's own, filled
/// to the last byte), then space returns (<see cref="EmbeddedStoreFault"/> holds the service to what it must do).
/// </summary>
internal sealed class DiskFullScenario : EmbeddedStoreFault
{
    public override bool FillsItsDisk => true;

    protected override string WhyNotOnServer =>
        "the database server's disk is the server's to manage: to the service it is a database that stops answering, which is fault 2";

    protected override string Fault => "disk full";

    protected override IReadOnlyList<string> LogSays => ["disk is full"];

    protected override async Task<Breakage> BreakAndMendAsync(FaultContext context, ServiceNodes nodes, TimeSpan duration, CancellationToken cancellationToken)
    {
        var disk = context.Disk ?? throw new InvalidOperationException("the disk-full fault needs a small disk of its own");
        var broke = Stopwatch.GetTimestamp();
        var filled = disk.Fill();
        await Task.Delay(duration, cancellationToken);
        disk.Free();
        var mended = Stopwatch.GetTimestamp();
        var log = await File.ReadAllTextAsync(nodes.All[0].Process!.LogPath, cancellationToken);
        return new Breakage(broke, mended, mended, log,
            string.Create(CultureInfo.InvariantCulture, $"the store's 64 MiB filesystem filled to the last byte ({filled / 1024.0 / 1024.0:0.0} MiB of filler)"),
            "the filler deleted; the node kept running");
    }
}
