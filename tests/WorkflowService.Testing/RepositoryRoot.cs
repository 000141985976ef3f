namespace WorkflowService.Testing;

/// <summary>The checkout a runner or a test runs from.</summary>
internal static class RepositoryRoot
{
    /// <summary>
    /// The checkout's top folder: the first folder above the working directory (else above the build output) that holds
    /// WorkflowService.slnx, or .git (a folder in a clone, a file in a worktree).
    /// </summary>
    public static string Find()
    {
        foreach (var start in new[] { Directory.GetCurrentDirectory(), AppContext.BaseDirectory })
        {
            for (var dir = new DirectoryInfo(start); dir is not null; dir = dir.Parent)
            {
                var git = Path.Combine(dir.FullName, ".git");
                if (File.Exists(Path.Combine(dir.FullName, "WorkflowService.slnx")) || Directory.Exists(git) || File.Exists(git))
                {
                    return dir.FullName;
                }
            }
        }

        throw new InvalidOperationException("run from inside the repository: neither WorkflowService.slnx nor .git was found above the current directory");
    }
}
