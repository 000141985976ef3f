using WorkflowService.Engine.Definitions;
using WorkflowService.UnitTests.Compilation;
using WorkflowService.Testing;

namespace WorkflowService.UnitTests.Benchmarks;

/// <summary>The large-definition benchmark's generated process: valid, of exactly the size asked for, and a realistic mix of steps.</summary>
public sealed class LargeDefinitionGeneratorTests
{
    [Theory]
    [InlineData(LargeDefinitionGenerator.MinSteps)]
    [InlineData(40)]
    [InlineData(300)]
    [InlineData(1000)]
    [InlineData(1001)]
    public void The_definition_compiles_with_exactly_the_steps_asked_for(int steps)
    {
        var generated = LargeDefinitionGenerator.Generate($"large-{steps}", steps);

        var definition = CompilerFixture.Valid(generated.Json);

        Assert.Equal(steps, definition.Steps.Count);
        Assert.Equal(steps, generated.Steps);
        Assert.Equal(generated.Name, definition.Name);
    }

    [Fact]
    public void The_mix_has_decisions_parallel_steps_and_approval_waits_whose_signals_drive_it_to_its_end()
    {
        var generated = LargeDefinitionGenerator.Generate("large-300", 300);

        var definition = CompilerFixture.Valid(generated.Json);

        var kinds = definition.Steps.Values.GroupBy(s => s.Kind).ToDictionary(g => g.Key, g => g.Count());
        Assert.True(kinds[StepKind.Assign] > 150, $"assignments: {kinds[StepKind.Assign]}");
        Assert.True(kinds[StepKind.Decision] >= 30);
        Assert.True(kinds[StepKind.Parallel] >= 20);
        var waits = definition.Steps.Values.OfType<WaitForSignalStep>().ToList();
        Assert.NotEmpty(waits);
        Assert.All(waits, w => Assert.NotNull(w.Timeout));
        Assert.Equal(waits.Select(w => w.Signal).Order(StringComparer.Ordinal), generated.Signals.Order(StringComparer.Ordinal));
        // Some approvals loop back to their block's intake: not a straight chain.
        Assert.Contains(definition.Steps.Values.OfType<DecisionStep>(), d => d.Branches.Any(b => b.Next.StartsWith("intake-", StringComparison.Ordinal)));
    }
}
