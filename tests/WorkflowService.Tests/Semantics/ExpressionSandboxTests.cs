using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;
using WorkflowService.Engine.Expressions;

namespace WorkflowService.Tests.Semantics;

public sealed class ExpressionSandboxTests
{
    private static ExpressionScope Scope(ExpressionOptions? options = null) =>
        new ExpressionRuntime(Options.Create(options ?? new ExpressionOptions { Timeout = TimeSpan.FromMilliseconds(500) }), new FakeTimeProvider())
            .OpenScope("""{"n":1}""", """{"a":2}""", null, () => """{"id":"x"}""");

    private static CompiledExpression Compile(string source) =>
        new ExpressionRuntime(Options.Create(new ExpressionOptions()), TimeProvider.System).Compile(source);

    [Fact]
    public void A_run_that_evaluates_nothing_builds_no_engine_and_keeps_the_variables_text()
    {
        // Not normalised either: a run without JavaScript hands back exactly what it was given.
        var scope = new ExpressionRuntime(Options.Create(new ExpressionOptions()), new FakeTimeProvider())
            .OpenScope("""{ "b": 1,  "a": [2] }""", null, null, () => throw new InvalidOperationException("the instance is read only when the engine is built"));
        scope.SetSignal("""{"x":1}""");
        Assert.False(scope.IsOpen);
        Assert.Equal("""{ "b": 1,  "a": [2] }""", scope.SerializeVariables());
    }

    [Fact]
    public void The_scope_opens_on_first_use_with_every_global_including_a_signal_set_before()
    {
        var scope = Scope();
        scope.SetSignal("""{"x":5}""");
        Assert.False(scope.IsOpen);
        Assert.Equal("""{"n":1,"a":2,"x":5,"id":"x"}""",
            scope.EvaluateToJson(Compile("({ n: vars.n, a: input.a, x: signal.x, id: instance.id })")));
        Assert.True(scope.IsOpen);
        scope.AssignJson("y", "[1]");
        Assert.Equal("""{"n":1,"y":[1]}""", scope.SerializeVariables());
    }

    [Fact]
    public void Variables_that_do_not_parse_fail_when_the_scope_opens_not_as_an_expression_error()
    {
        var scope = new ExpressionRuntime(Options.Create(new ExpressionOptions()), new FakeTimeProvider())
            .OpenScope("{not json", null, null, () => """{"id":"x"}""");
        Assert.Throws<ScopeLoadException>(() => scope.Evaluate(Compile("1")));
    }

    [Theory]
    [InlineData("System.IO.File.ReadAllText('/etc/passwd')")]
    [InlineData("importNamespace('System.IO')")]
    [InlineData("require('fs')")]
    [InlineData("fetch('http://127.0.0.1/')")]
    public void Expressions_cannot_reach_the_clr_files_or_network(string source)
    {
        var error = Assert.Throws<ExpressionFailedException>(() => Scope().Evaluate(Compile(source)));
        Assert.Contains("threw", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("eval('1 + 1')")]
    [InlineData("new Function('return 1')()")]
    [InlineData("''.constructor.constructor('return Date.now()')()")]
    public void Expressions_cannot_compile_code_from_text(string source)
    {
        // Code made from a string at run time is code the compiler never checked or classified.
        var error = Assert.Throws<ExpressionFailedException>(() => Scope().Evaluate(Compile(source)));
        Assert.Contains("threw", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("Date.parse('10:00')")]
    [InlineData("Date.parse('Jan 5')")]
    [InlineData("new Date('5 January 10:00').getTime()")]
    [InlineData("Date.parse('T10:00Z')")]
    [InlineData("Date.parse(new Date(0).toTimeString())")]
    [InlineData("Date.parse('2026-13-01')")]
    [InlineData("Date.parse('2026-02-29')")]
    [InlineData("Date.parse('2026-01-05T25:00')")]
    [InlineData("Date.parse('2026-01-05T10:00' + ' '.repeat(200) + 'x')")]
    [InlineData("Date.parse('5 January')")]
    public void A_date_string_without_its_date_parses_to_nothing_not_to_the_machines_day(string source)
    {
        Assert.Equal("null", Scope().EvaluateToJson(Compile($"(() => {{ const t = {source}; return isNaN(t) ? null : t; }})()")));
    }

    [Theory]
    [InlineData("Date.parse('2026-01-05')", 1767571200000)]
    [InlineData("Date.parse('2026-01-05T10:00:00Z')", 1767607200000)]
    [InlineData("Date.parse('2026-01-05T11:00:00+01:00')", 1767607200000)]
    [InlineData("Date.parse('2026-01-05T10:00')", 1767607200000)]
    [InlineData("Date.parse(new Date(1767607200000).toString())", 1767607200000)]
    [InlineData("Date.parse(new Date(1767607200000).toUTCString())", 1767607200000)]
    [InlineData("Date.parse(new Date(1767607200000).toISOString())", 1767607200000)]
    [InlineData("Date.parse(new Date(1767607200000).toDateString())", 1767571200000)]
    [InlineData("Date.parse(new Date(-1e14).toISOString())", -100000000000000)]
    [InlineData("Date.parse('2026-01-05 10:00')", 1767607200000)]
    [InlineData("Date.parse('2026-01-05T24:00')", 1767657600000)]
    [InlineData("Date.parse('2024-02-29')", 1709164800000)]
    [InlineData("Date.parse('+002026-01-05')", 1767571200000)]
    [InlineData("Date.parse('Mon, 5 Jan 2026 10:00:00 +0000')", 1767607200000)]
    [InlineData("Date.parse('January 5, 2026')", 1767571200000)]
    public void A_date_string_that_names_its_day_parses_in_utc(string source, long expected)
    {
        Assert.Equal(expected.ToString(System.Globalization.CultureInfo.InvariantCulture), Scope().EvaluateToJson(Compile(source)));
    }

    [Fact]
    public void Locale_formatting_answers_the_same_whatever_the_hosts_culture()
    {
        var before = System.Globalization.CultureInfo.CurrentCulture;
        System.Globalization.CultureInfo.CurrentCulture = new System.Globalization.CultureInfo("de-DE");
        try
        {
            Assert.Equal("\"1,234.5\"", Scope().EvaluateToJson(Compile("(1234.5).toLocaleString()")));
        }
        finally
        {
            System.Globalization.CultureInfo.CurrentCulture = before;
        }
    }

    [Fact]
    public void What_a_run_leaves_is_evaluated_with_a_budget_of_its_own_on_an_engine_the_run_did_not_touch()
    {
        var scope = Scope();
        scope.LimitTo(TimeSpan.FromTicks(1));
        Assert.Throws<RunBudgetExceededException>(() => scope.Evaluate(Compile("(input.a = 7, vars.n = 5)")));
        scope.LimitTo(TimeSpan.FromSeconds(30));
        scope.Evaluate(Compile("(input.a = 7, vars.n = 5, Math.max = () => 0)"));
        var variables = scope.SerializeVariables();

        var settled = scope.ForSettledValues(variables, TimeSpan.FromSeconds(30));

        Assert.NotSame(scope, settled);
        Assert.Equal("""{"a":2,"n":5,"max":3}""", settled.EvaluateToJson(Compile("({ a: input.a, n: vars.n, max: Math.max(1, 3) })")));
    }

    [Fact]
    public void A_run_that_built_no_engine_evaluates_what_it_leaves_on_the_engine_to_be_with_a_fresh_budget()
    {
        var scope = Scope();
        scope.LimitTo(TimeSpan.FromTicks(1));

        var settled = scope.ForSettledValues(scope.SerializeVariables(), TimeSpan.FromSeconds(30));

        Assert.Same(scope, settled);
        Assert.Equal("1", settled.EvaluateToJson(Compile("vars.n")));
    }

    [Fact]
    public void A_runaway_loop_is_stopped_by_the_statement_or_time_limit()
    {
        var error = Assert.Throws<ExpressionFailedException>(() => Scope().Evaluate(Compile("(() => { while (true) {} })()")));
        Assert.Contains("limit", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("'x'.repeat(1e9).length")]
    [InlineData("'abc'.repeat(2000000).length")]
    [InlineData("''.padStart(1e9, 'x').length")]
    [InlineData("'x'.padEnd(2e9).length")]
    // The ways round the method's name: a computed key, a prototype, code from text.
    [InlineData("'x'['re' + 'peat'](1e9).length")]
    [InlineData("String.prototype.repeat.call('x', 1e9).length")]
    [InlineData("Object.values(Object.getOwnPropertyDescriptors(Object.getPrototypeOf(''))).find(d => d.value && d.value.name === 're' + 'peat').value.call('x', 1e9)")]
    [InlineData("[1].map(() => 'x')[0][`${'re'}peat`](1e9)")]
    public void Strings_sized_by_a_number_are_refused_before_they_are_built(string source)
    {
        var error = Assert.Throws<ExpressionFailedException>(() => Scope().Evaluate(Compile(source)));
        Assert.Contains("Invalid string length", error.Message, StringComparison.Ordinal);
        Assert.Contains("Expressions:MaxStringLength", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_script_can_catch_the_string_limit_and_strings_within_it_are_built()
    {
        Assert.Equal("caught", Scope().Evaluate(Compile("(() => { try { return 'x'.repeat(1e9); } catch (e) { return e instanceof RangeError ? 'caught' : 'other'; } })()")).ToString());
        Assert.Equal("xxx", Scope().Evaluate(Compile("'x'.repeat(3)")).ToString());
        Assert.Equal("  7", Scope().Evaluate(Compile("'7'.padStart(3)")).ToString());
        Assert.Equal("7..", Scope().Evaluate(Compile("'7'.padEnd(3, '.')")).ToString());
    }

    [Theory]
    [InlineData("new Array(1e9).length")]
    [InlineData("Array(2000000).fill(0).length")]
    [InlineData("Array.from({ length: 1e9 }).length")]
    public void Arrays_longer_than_the_limit_are_refused_before_they_are_allocated(string source)
    {
        var error = Assert.Throws<ExpressionFailedException>(() => Scope().Evaluate(Compile(source)));
        Assert.Contains("exceeded its array length limit (Expressions:MaxArrayLength)", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Deep_recursion_is_stopped_by_the_recursion_limit()
    {
        var error = Assert.Throws<ExpressionFailedException>(() => Scope().Evaluate(Compile("(function f(n) { return f(n + 1); })(0)")));
        Assert.Contains("recursion limit", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Allocating_without_bound_is_stopped_by_the_memory_limit()
    {
        var options = new ExpressionOptions { MemoryLimitBytes = 4 * 1024 * 1024, MaxStatements = int.MaxValue, Timeout = TimeSpan.FromSeconds(30) };
        var error = Assert.Throws<ExpressionFailedException>(() =>
            Scope(options).Evaluate(Compile("(() => { let s = 'x'; const keep = []; while (true) { keep.push(s + keep.length); } })()")));
        Assert.Contains("memory limit", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Expressions_see_vars_input_and_instance_and_assignments_update_vars()
    {
        var scope = Scope();
        scope.Assign("m", Compile("vars.n + input.a"));
        Assert.Equal("""{"n":1,"m":3}""", scope.SerializeVariables());
        Assert.Equal("\"x\"", scope.EvaluateToJson(Compile("instance.id")));
    }

    [Fact]
    public void A_statement_list_is_not_an_expression()
    {
        Assert.Throws<ExpressionSyntaxException>(() => Compile("var x = 1; x"));
    }

    [Fact]
    public void Statements_cannot_be_smuggled_past_the_closing_parenthesis()
    {
        Assert.Throws<ExpressionSyntaxException>(() => Compile("0); globalThis.leak = 1; (0"));
    }
}
