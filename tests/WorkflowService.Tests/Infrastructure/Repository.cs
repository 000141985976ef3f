namespace WorkflowService.Tests.Infrastructure;

/// <summary>The checkout the tests run from: its root folder and files in it.</summary>
public static class Repository
{
    private static readonly Lazy<string> LazyRoot = new(FindRoot);

    /// <summary>The folder that holds WorkflowService.slnx, found upwards from the test build.</summary>
    public static string Root => LazyRoot.Value;

    /// <summary>A path under the repository root, from its parts.</summary>
    public static string Path(params string[] parts) => System.IO.Path.Combine([Root, .. parts]);

    private static string FindRoot()
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(System.IO.Path.Combine(directory.FullName, "WorkflowService.slnx")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException($"WorkflowService.slnx is not in {AppContext.BaseDirectory} or any folder above it.");
    }
}
