using System.CommandLine;

namespace WorkflowService.RunnerBackends;

/// <summary>
/// What the load runner's and the fault runner's commands share: where the database servers are (--postgres, --mongodb),
/// --no-build, and how a command line is parsed (an unknown option, command or value is an error, exit code 2, that names
/// what is allowed).
/// </summary>
internal sealed class SharedCommandOptions
{
    public const int UsageError = 2;

    public Option<string> Postgres { get; } = new("--postgres")
    {
        Description = "Admin connection string (default $WORKFLOW_BENCH_POSTGRES, else Host=127.0.0.1;Username=postgres;Password=postgres;SSL Mode=Disable); each run creates and drops its own database.",
        HelpName = "connection string",
    };

    /// <summary>--mongodb: a replica set's connection string, by default the MongoDB suites' ($WORKFLOW_TESTS_MONGODB).</summary>
    public Option<string> MongoDb { get; } = new("--mongodb")
    {
        Description = $"A MongoDB replica set's connection string (default ${MongoDbBackend.ServerVariable}, the MongoDB test suites' server); each run creates and drops its own database.",
        HelpName = "connection string",
    };

    public Option<bool> NoBuild { get; } = new("--no-build") { Description = "Do not build the service (Release) before the run." };

    /// <summary>--postgres, else $WORKFLOW_BENCH_POSTGRES, else the server on this machine.</summary>
    public string PostgresAdmin(ParseResult parse) =>
        parse.GetValue(Postgres) ?? Environment.GetEnvironmentVariable("WORKFLOW_BENCH_POSTGRES")
        // Loopback to a server on this machine: no TLS, as between containers of one compose project. The report
        // records the connection's SSL mode; pass --postgres with "SSL Mode=Require" to measure with TLS.
        ?? "Host=127.0.0.1;Username=postgres;Password=postgres;SSL Mode=Disable";

    public string? MongoDbServer(ParseResult parse) =>
        parse.GetValue(MongoDb) is { Length: > 0 } given ? given
        : Environment.GetEnvironmentVariable(MongoDbBackend.ServerVariable) is { Length: > 0 } configured ? configured : null;

    public bool Build(ParseResult parse) => !parse.GetValue(NoBuild);

    /// <summary>
    /// Runs <paramref name="execute"/>, unless a backend it names has no server to run on: then one line says why and
    /// the exit code is <see cref="UsageError"/>, before anything is built or started.
    /// </summary>
    public static async Task<int> WithServersAsync<T>(T options, Func<T, IReadOnlyList<string>> backends, Func<T, string?> mongoDb, Func<T, Task<int>> execute)
    {
        if (backends(options).Contains("mongodb") && mongoDb(options) is null)
        {
            await Console.Error.WriteLineAsync(MongoDbBackend.NoServer);
            return UsageError;
        }

        return await execute(options);
    }

    /// <summary>A comma-separated list option's names.</summary>
    public static string[]? Names(string? list) =>
        list?.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);

    /// <summary>Parses <paramref name="args"/> against <paramref name="root"/> and runs the chosen command; --help prints the usage.</summary>
    public static async Task<int> InvokeAsync(RootCommand root, string[] args)
    {
        var parsed = root.Parse(args);
        if (parsed.Errors.Count > 0)
        {
            foreach (var error in parsed.Errors)
            {
                await Console.Error.WriteLineAsync(error.Message);
            }

            await Console.Error.WriteLineAsync("See --help for the commands and options.");
            return UsageError;
        }

        // The runners handle Ctrl+C themselves (a run stops its services and drops its database): no forced exit.
        return await parsed.InvokeAsync(new InvocationConfiguration { ProcessTerminationTimeout = null });
    }
}
