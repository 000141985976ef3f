using WorkflowService.Engine.Execution;

namespace WorkflowService.Tests;

public sealed class ArchitectureTests
{
    [Fact]
    public void The_engine_knows_nothing_of_http_or_database_drivers()
    {
        var forbidden = new[] { "Microsoft.AspNetCore", "Microsoft.EntityFrameworkCore", "Npgsql", "MongoDB", "Oracle", "StackExchange.Redis", "Microsoft.Data.Sqlite" };
        var references = typeof(WorkflowExecutor).Assembly.GetReferencedAssemblies().Select(a => a.Name!).ToList();

        Assert.NotEmpty(references);
        Assert.DoesNotContain(references, name => forbidden.Any(f => name.StartsWith(f, StringComparison.Ordinal)));
    }

    [Fact]
    public void The_host_picks_a_store_by_configuration_and_knows_no_database_driver()
    {
        var forbidden = new[] { "Microsoft.EntityFrameworkCore", "Npgsql", "MongoDB", "Oracle", "StackExchange.Redis", "Microsoft.Data.Sqlite" };
        var references = typeof(Program).Assembly.GetReferencedAssemblies().Select(a => a.Name!).ToList();

        Assert.Contains("WorkflowService.Storage.Relational", references);
        Assert.Contains("WorkflowService.Storage.MongoDb", references);
        Assert.DoesNotContain(references, name => forbidden.Any(f => name.StartsWith(f, StringComparison.Ordinal)));
    }
}
