namespace WorkflowService.FaultRunner;

/// <summary>What one `faults` invocation asks for, as the command line parsed it.</summary>
internal sealed record FaultOptions
{
    public required IReadOnlyList<string> Backends { get; init; }
    public required FaultTier Tier { get; init; }

    /// <summary>Only these scenarios (by name); null for all.</summary>
    public IReadOnlySet<string>? Only { get; init; }

    public required string PostgresAdmin { get; init; }

    /// <summary>The MongoDB replica set (--mongodb, else $WORKFLOW_TESTS_MONGODB); null where neither names one.</summary>
    public string? MongoDb { get; init; }
    public required string RepositoryRoot { get; init; }

    /// <summary>Where each row's JSON goes (one file per fault and backend) and beside which the table is regenerated.</summary>
    public required string OutputDirectory { get; init; }

    public bool Build { get; init; } = true;

    public string ServiceDll => Path.Combine(RepositoryRoot, "src", "WorkflowService", "bin", "Release", "net10.0", "WorkflowService.dll");

    /// <summary>The service with the test-only store decorator that fails store calls on purpose (row 5).</summary>
    public string FaultHostDll => Path.Combine(RepositoryRoot, "tests", "WorkflowService.FaultHost", "bin", "Release", "net10.0", "WorkflowService.FaultHost.dll");
}
