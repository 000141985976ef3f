namespace WorkflowService.Testing;

/// <summary>
/// A filesystem of the fault runner's own that can turn read-only under a process holding its files open for writing,
/// as a real one does after an error: ext4 in an image file on a loop device, mounted with errors=remount-ro. Writing to
/// its trigger_fs_error (sysfs) raises an ext4 error, and the kernel remounts it read-only at once (emergency_ro):
/// reads go on, every write fails with EROFS. It is writable again only once unmounted, checked (e2fsck) and mounted
/// again, as an operator would repair it. Disturbs no other file on the machine; takes root and loop devices.
/// </summary>
internal sealed class ReadOnlyDisk : IAsyncDisposable
{
    /// <summary>
    /// Its name in WORKFLOW_TESTS_REQUIRE_TOOLS: listed there, a machine that cannot make such a filesystem fails the
    /// tests and fault rows that need one instead of reporting them not run.
    /// </summary>
    public const string Tool = "loop-device";

    private static readonly string[] Tools = ["mkfs.ext4", "losetup", "e2fsck", "mount"];

    private readonly string _image;
    private readonly string _device;

    private ReadOnlyDisk(string path, string image, string device)
    {
        Path = path;
        _image = image;
        _device = device;
    }

    /// <summary>Where the filesystem is mounted.</summary>
    public string Path { get; }

    /// <summary>Whether the kernel has made it read-only (it says so in /proc/mounts).</summary>
    public bool IsReadOnly =>
        File.ReadAllLines("/proc/mounts").Select(l => l.Split(' ')).Any(f => f.Length > 3 && f[1] == Path && f[3].Split(',').Any(o => o is "ro" or "emergency_ro"));

    /// <summary>Why no such filesystem can be made here, or null.</summary>
    public static string? Unavailable() =>
        Environment.UserName != "root" ? "a loop-device filesystem takes root"
        : !File.Exists("/dev/loop-control") ? "this machine has no loop devices (/dev/loop-control)"
        : Tools.FirstOrDefault(t => !OnPath(t)) is { } missing ? $"{missing} is not installed"
        : !Directory.Exists("/sys/fs/ext4") ? "the kernel has no ext4 (/sys/fs/ext4)"
        : !FreeLoopDevice() ? "no free loop device (losetup -f)"
        : null;

    private static bool FreeLoopDevice()
    {
        using var probe = System.Diagnostics.Process.Start(new System.Diagnostics.ProcessStartInfo("losetup", ["-f"])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        });
        if (probe is null || !probe.WaitForExit(TimeSpan.FromSeconds(10)))
        {
            return false;
        }

        return probe.ExitCode == 0;
    }

    public static async Task<ReadOnlyDisk> MountAsync(int megabytes, CancellationToken cancellationToken)
    {
        var path = Directory.CreateTempSubdirectory("wf-faults-ro-").FullName;
        var image = path + ".img";
        await using (var file = new FileStream(image, FileMode.CreateNew))
        {
            file.SetLength(megabytes * 1024L * 1024);
        }

        await SystemTool.RunAsync("mkfs.ext4", ["-q", "-F", image], cancellationToken);
        var device = (await SystemTool.RunAsync("losetup", ["-f", "--show", image], cancellationToken)).Trim();
        var disk = new ReadOnlyDisk(path, image, device);
        await disk.MountAsync(cancellationToken);
        return disk;
    }

    /// <summary>Raises an ext4 error: the kernel remounts the filesystem read-only under whoever has files open on it.</summary>
    public void TurnReadOnly() =>
        File.WriteAllText($"/sys/fs/ext4/{System.IO.Path.GetFileName(_device)}/trigger_fs_error", "fault table: the store's filesystem turned read-only");

    /// <summary>The operator's repair, with nothing holding the filesystem: unmount, check and fix, mount again (writable).</summary>
    public async Task RepairAsync(CancellationToken cancellationToken)
    {
        await SystemTool.RunAsync("umount", [Path], cancellationToken);
        // 0: clean; 1: errors corrected.
        await SystemTool.RunAsync("e2fsck", ["-f", "-y", _device], cancellationToken, 0, 1);
        await MountAsync(cancellationToken);
    }

    public async ValueTask DisposeAsync()
    {
        await SystemTool.RunAsync("umount", ["-l", Path], CancellationToken.None);
        await SystemTool.RunAsync("losetup", ["-d", _device], CancellationToken.None);
        File.Delete(_image);
        Directory.Delete(Path, recursive: true);
    }

    private async Task MountAsync(CancellationToken cancellationToken) =>
        await SystemTool.RunAsync("mount", ["-o", "errors=remount-ro", _device, Path], cancellationToken);

    private static bool OnPath(string tool) =>
        (Environment.GetEnvironmentVariable("PATH") ?? string.Empty).Split(':').Append("/usr/sbin").Append("/sbin")
            .Any(directory => File.Exists(System.IO.Path.Combine(directory, tool)));
}
