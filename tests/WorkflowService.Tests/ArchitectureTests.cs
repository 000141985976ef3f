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
}
