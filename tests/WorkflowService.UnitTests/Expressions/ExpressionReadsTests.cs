using WorkflowService.Engine.Expressions;
using WorkflowService.UnitTests.Compilation;

namespace WorkflowService.UnitTests.Expressions;

/// <summary>What an expression reads, as its text shows: what a search attribute's value may change with.</summary>
public sealed class ExpressionReadsTests
{
    [Theory]
    [InlineData("'EU'", ExpressionReads.None)]
    [InlineData("Math.max(1, 2) + Number('3')", ExpressionReads.None)]
    [InlineData("input.region", ExpressionReads.Input)]
    [InlineData("['EU', 'US'][input.n % 2]", ExpressionReads.Input)]
    [InlineData("new Date(Date.UTC(2026, 0, 1) + input.n * 1000).toISOString()", ExpressionReads.Input)]
    [InlineData("({ region: input.region, input }).region", ExpressionReads.Input)]
    [InlineData("input?.customer ?? null", ExpressionReads.Input)]
    [InlineData("vars.region ?? input.region ?? null", ExpressionReads.Input | ExpressionReads.Variables)]
    [InlineData("vars['amount'] > 10", ExpressionReads.Variables)]
    [InlineData("signal.amount", ExpressionReads.Anything)]
    [InlineData("instance.status", ExpressionReads.Anything)]
    [InlineData("item.id", ExpressionReads.Anything)]
    [InlineData("new Date().toISOString()", ExpressionReads.Anything)]
    [InlineData("Date.now()", ExpressionReads.Anything)]
    [InlineData("Date()", ExpressionReads.Anything)]
    [InlineData("Math.random() > 0.5", ExpressionReads.Anything)]
    [InlineData("Date['now']()", ExpressionReads.Anything)]
    [InlineData("Math[input.f](1, 2)", ExpressionReads.Anything)]
    [InlineData("globalThis.instance", ExpressionReads.Anything)]
    [InlineData("input.items.map(i => i.amount)[0]", ExpressionReads.Input | ExpressionReads.Anything)]
    [InlineData("secret('key')", ExpressionReads.Anything)]
    public void An_expression_reads_what_its_text_names(string source, ExpressionReads expected) =>
        Assert.Equal(expected, CompilerFixture.Expressions.Compile(source).Reads);
}
