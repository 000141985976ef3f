using System.CommandLine;
using WorkflowService.RunnerBackends;
using WorkflowService.Testing;
using WorkflowService.Testing.Processes;

namespace WorkflowService.FaultRunner;

/// <summary>The fault runner's command, on System.CommandLine, for the benchmark program to add to its own.</summary>
internal static class FaultCommand
{
    /// <summary>
    /// faults: the fault table (docs/reliability.md). --tier short is the CI tier; full is the published table. Exit code 1
    /// when any applicable row fails.
    /// </summary>
    public static Command Create(SharedCommandOptions shared, Func<FaultOptions, Task<int>> execute)
    {
        var backend = new Option<string>("--backend")
        {
            Description = $"The backends to run on (all: {string.Join(" and ", FaultCatalog.AllMeans)}; mongodb only when named).",
            DefaultValueFactory = _ => "all",
        }.AcceptOnlyFromAmong([.. FaultCatalog.Backends, "all"]);
        var tier = new Option<string>("--tier")
        {
            Description = "short: fewer faults and less load (CI); full: the published table.",
            DefaultValueFactory = _ => "full",
        }.AcceptOnlyFromAmong("short", "full");
        var only = new Option<string>("--only") { Description = "Run only these faults (name[,name...]).", HelpName = "names" };
        var known = FaultCatalog.All.Select(s => s.Name).ToList();
        only.Validators.Add(result =>
        {
            var unknown = SharedCommandOptions.Names(result.GetValueOrDefault<string>())?.Where(n => !known.Contains(n)).ToList();
            if (unknown is { Count: > 0 })
            {
                result.AddError($"--only: no fault is named {string.Join(", ", unknown)}; known: {string.Join(", ", known)}");
            }
        });
        var output = new Option<string>("--output") { Description = "Where reliability.md and the rows' JSON (reliability/) go (default docs).", HelpName = "DIR" };
        var command = new Command("faults", "The fault table: each fault injected under load into real service processes on a fresh database, the store then checked against the load's ledger; writes <output>/reliability.md.")
        {
            backend, tier, only, shared.Postgres, shared.MongoDb, output, shared.NoBuild,
        };
        command.SetAction(parse =>
        {
            var root = RepositoryRoot.Find();
            var chosen = parse.GetValue(backend);
            return SharedCommandOptions.WithServersAsync(new FaultOptions
            {
                Backends = chosen == "all" ? FaultCatalog.AllMeans : [chosen!],
                Tier = parse.GetValue(tier) == "short" ? FaultTier.Short : FaultTier.Full,
                Only = SharedCommandOptions.Names(parse.GetValue(only))?.ToHashSet(),
                PostgresAdmin = shared.PostgresAdmin(parse),
                MongoDb = shared.MongoDbServer(parse),
                RepositoryRoot = root,
                OutputDirectory = Path.GetFullPath(parse.GetValue(output) ?? Path.Combine(root, "docs")),
                Build = shared.Build(parse),
            }, o => o.Backends, o => o.MongoDb, execute);
        });
        return command;
    }

    /// <summary>Builds the fault host first unless told not to, then runs the table; exit code 1 when any applicable row fails.</summary>
    public static async Task<int> RunAsync(FaultOptions options, CancellationToken cancellationToken)
    {
        if (options.Build)
        {
            await ServiceBuild.RunAsync(options.RepositoryRoot, ServiceBuild.FaultHost, cancellationToken);
        }

        return await new FaultRunner(options).RunAsync(cancellationToken) ? 0 : 1;
    }
}
