using System.Diagnostics;
using System.Globalization;

namespace WorkflowService.FaultRunner;

/// <summary>
/// Fault 11, its second half: the embedded store's filesystem turns read-only under load, as a real one does after an
/// error (ext4 with errors=remount-ro, the error raised through sysfs): the service holds the database file open for
/// writing and every write now fails. The operator then repairs it (stop the node, unmount, e2fsck, mount) and starts
/// the node again (<see cref="EmbeddedStoreFault"/> holds the service to what it must do meanwhile and after).
/// </summary>
internal sealed class ReadOnlyFileScenario : EmbeddedStoreFault
{
    public override bool TurnsItsDiskReadOnly => true;

    protected override string WhyNotOnServer =>
        "the database server's files are the server's to manage: to the service it is a database that refuses writes or stops answering, which is fault 2";

    protected override string Fault => "read-only";

    // SQLite's words for a write refused by a read-only file, and the service's for an I/O error.
    protected override IReadOnlyList<string> LogSays => ["readonly", "read-only"];

    protected override async Task<Breakage> BreakAndMendAsync(FaultContext context, ServiceNodes nodes, TimeSpan duration, CancellationToken cancellationToken)
    {
        var disk = context.ReadOnlyDisk ?? throw new InvalidOperationException("the read-only fault needs a filesystem of its own");
        var node = nodes.All[0];
        var broke = Stopwatch.GetTimestamp();
        disk.TurnReadOnly();
        var turned = disk.IsReadOnly;
        await Task.Delay(duration, cancellationToken);
        var ended = Stopwatch.GetTimestamp();
        var log = await File.ReadAllTextAsync(node.Process!.LogPath, cancellationToken);

        // The operator's repair: the node lets go of the filesystem, which is checked and mounted again.
        var repair = Stopwatch.StartNew();
        await node.StopAsync();
        await disk.RepairAsync(cancellationToken);
        await nodes.StartAsync(node, cancellationToken);
        var breakage = new Breakage(broke, ended, Stopwatch.GetTimestamp(), log,
            "the store's 64 MiB ext4 filesystem (loop device, errors=remount-ro) turned read-only by an ext4 error under load",
            string.Create(CultureInfo.InvariantCulture, $"stop the node, unmount, e2fsck, mount, start the node: {repair.Elapsed.TotalSeconds:0.0} s; recovery counts from the node's start"));
        if (!turned)
        {
            breakage.Failures.Add("the filesystem did not turn read-only (the kernel did not remount it): the row tested nothing");
        }

        return breakage;
    }
}
