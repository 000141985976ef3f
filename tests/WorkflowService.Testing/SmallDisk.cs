namespace WorkflowService.Testing;

/// <summary>
/// A small filesystem of the fault runner's own (a tmpfs of a few megabytes, mounted on a fresh directory), to hold an
/// embedded store's file and to fill up on purpose: the disk-full fault disturbs no other file on the machine.
/// Mounting takes root.
/// </summary>
internal sealed class SmallDisk : IAsyncDisposable
{
    private readonly string _filler;

    private SmallDisk(string path)
    {
        Path = path;
        _filler = System.IO.Path.Combine(path, "filler");
    }

    public string Path { get; }

    /// <summary>Why no small disk can be mounted here, or null.</summary>
    public static string? Unavailable() => Environment.UserName != "root"
        ? "mounting a small filesystem to fill takes root"
        : File.Exists("/usr/bin/mount") || File.Exists("/bin/mount") ? null : "mount is not installed";

    public static async Task<SmallDisk> MountAsync(int megabytes, CancellationToken cancellationToken)
    {
        var path = Directory.CreateTempSubdirectory("wf-faults-disk-").FullName;
        await SystemTool.RunAsync("mount", ["-t", "tmpfs", "-o", $"size={megabytes}m", "tmpfs", path], cancellationToken);
        return new SmallDisk(path);
    }

    /// <summary>Writes a file until the filesystem has no space left; returns the bytes it took.</summary>
    public long Fill()
    {
        var block = new byte[64 * 1024];
        long written = 0;
        // Unbuffered: every write reaches the filesystem at once, and closing the file has nothing left to flush.
        using var file = new FileStream(_filler, FileMode.Append, FileAccess.Write, FileShare.None, bufferSize: 0);
        try
        {
            while (true)
            {
                file.Write(block);
                written += block.Length;
            }
        }
        catch (IOException)
        {
            // ENOSPC: full. Smaller writes take what is left of the last block.
            for (var size = block.Length / 2; size >= 512; size /= 2)
            {
                try
                {
                    file.Write(block, 0, size);
                    written += size;
                }
                catch (IOException)
                {
                }
            }
        }

        return written;
    }

    /// <summary>Space returns: the filler is deleted.</summary>
    public void Free() => File.Delete(_filler);

    public async ValueTask DisposeAsync()
    {
        await SystemTool.RunAsync("umount", ["-l", Path], CancellationToken.None);
        Directory.Delete(Path, recursive: true);
    }
}
