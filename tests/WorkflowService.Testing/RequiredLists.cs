namespace WorkflowService.Testing;

/// <summary>
/// CI's lists of what a machine must have (comma-separated names in environment variables): a backend or tool named
/// there turns a test's skip, or a fault row's "not run", into a failure, so that a machine that should run a case
/// cannot pass without running it. Read alike by the test suites and the fault runner.
/// </summary>
internal static class RequiredLists
{
    /// <summary>Backends by name (sqlite, postgres, redis, mongodb).</summary>
    public const string Backends = "WORKFLOW_TESTS_REQUIRE_BACKENDS";

    /// <summary>Tool groups by name (npm, kubectl, sh, prometheus, chromium, previous-release, loop-device).</summary>
    public const string Tools = "WORKFLOW_TESTS_REQUIRE_TOOLS";

    /// <summary>Whether the list in <paramref name="variable"/> names <paramref name="name"/> (case-insensitive).</summary>
    public static bool Requires(string variable, string name) =>
        (Environment.GetEnvironmentVariable(variable) ?? string.Empty)
            .Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Contains(name, StringComparer.OrdinalIgnoreCase);
}
