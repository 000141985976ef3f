using System.Text.Json;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.UnitTests.Expressions;

/// <summary>
/// Paths into input and vars read from their JSON give what the JavaScript engine gives, for every attribute type, or
/// leave the expression to the engine.
/// </summary>
public sealed class DataPathTests
{
    private static readonly ExpressionRuntime Runtime = new(Options.Create(new ExpressionOptions()), TimeProvider.System);

    public static TheoryData<string> Paths => new()
    {
        "input.customer", "input['customer']", "vars.region ?? input.region ?? null", "input.missing ?? 'none'",
        "input.missing ?? undefined", "input.nested.deep", "input.nested?.deep", "input.missing?.deep",
        "input.missing?.deep.deeper", "input.missing.deep", "input.nothing.deep", "input.nothing?.deep",
        "input.list[0]", "input.list[1].name", "input.list[9]", "input.list.length", "input.list['0']", "input.list[0].length",
        "input.amount", "input.big", "input.negativeZero", "input.flag", "input.when", "input.dup", "input.nested",
        "input.list", "vars", "input", "input.toString", "input.constructor", "input.hasOwnProperty", "input.__proto__",
        "input.customer.length", "input.amount.toFixed", "input.list.map", "input['']", "input['with space']",
        "input.escaped", "input.lone", "vars.count", "vars.count ?? 0", "null ?? input.customer", "'fixed'", "42", "true",
        "input.list[0] ?? input.customer", "input['\\ud800']", "input.id ?? 'none'", "vars.x.y ?? 'none'",
    };

    private static readonly (string Variables, string? Input)[] Data =
    [
        ("""{"region":"EU","count":3}""",
         """{"customer":"C-1","region":"UK","nested":{"deep":"d"},"nothing":null,"list":["a",{"name":"n"}],"amount":12000.5,"big":1e300,"negativeZero":-0,"flag":true,"when":"2026-11-01T10:00:00Z","dup":1,"dup":2,"":"empty","with space":"s","escaped":"\u00e9\"","lone":"\ud800","__proto__":"own"}"""),
        ("""{"region":null}""", """{"customer":42,"nested":{},"list":[],"amount":"12"}"""),
        ("{}", null),
        ("{}", "null"),
        ("""{"count":null}""", """{"customer":null,"list":[null],"nested":[1,2]}"""),
        // Keys that are not well-formed UTF-16 (escaped): comparing another key with them throws in the reader.
        ("""{"x":{"\ud800":1}}""", """{"\ud800":1,"region":"EU"}"""),
    ];

    [Theory]
    [MemberData(nameof(Paths))]
    public void A_path_read_from_json_gives_what_the_engine_gives(string source)
    {
        var expression = Runtime.Compile(source);
        var path = Assert.IsType<DataPath>(expression.DataPath);
        foreach (var (variables, input) in Data)
        {
            using var variablesDocument = JsonDocument.Parse(variables);
            using var inputDocument = input is null ? null : JsonDocument.Parse(input);
            var read = path.Evaluate(variablesDocument.RootElement, inputDocument?.RootElement);
            if (read.Outcome == DataPathOutcome.NeedsEngine)
            {
                continue;
            }

            object? engine;
            try
            {
                engine = Runtime.OpenScope(variables, input, null, () => "null").EvaluateToPlain(expression);
                Assert.NotEqual(DataPathOutcome.Throws, read.Outcome);
            }
            catch (ExpressionFailedException)
            {
                Assert.Equal(DataPathOutcome.Throws, read.Outcome);
                continue;
            }

            foreach (var type in Enum.GetValues<SearchValueType>())
            {
                Assert.Equal(SearchAttributeEvaluation.FromPlain(type, engine), SearchAttributeEvaluation.FromPlain(type, read.Value));
            }
        }
    }

    [Theory]
    [InlineData("input.customer")]
    [InlineData("vars.region ?? input.region ?? null")]
    [InlineData("input.list[1].name")]
    [InlineData("input.nested?.deep")]
    public void Plain_paths_need_no_engine(string source)
    {
        var (variables, input) = Data[0];
        using var variablesDocument = JsonDocument.Parse(variables);
        using var inputDocument = JsonDocument.Parse(input!);

        var read = Runtime.Compile(source).DataPath!.Evaluate(variablesDocument.RootElement, inputDocument.RootElement);

        Assert.Equal(DataPathOutcome.Value, read.Outcome);
    }

    [Theory]
    [InlineData("input.customer.toUpperCase()")]
    [InlineData("input[vars.key]")]
    [InlineData("input.amount * 2")]
    [InlineData("signal.x")]
    [InlineData("input.list[1.5]")]
    [InlineData("vars.region || input.region")]
    [InlineData("(input.customer)")]
    public void Anything_else_is_no_path(string source)
    {
        var expression = Runtime.Compile(source);

        if (source == "(input.customer)")
        {
            // Parentheses are not in the tree: this one is a path.
            Assert.NotNull(expression.DataPath);
            return;
        }

        Assert.Null(expression.DataPath);
    }

    [Fact]
    public void Attributes_of_plain_paths_build_no_engine()
    {
        var scope = Runtime.OpenScope("""{"region":"EU"}""", """{"customer":"C-1"}""", null, () => throw new InvalidOperationException("no engine"));
        var attributes = new List<SearchAttribute>
        {
            new("customer", SearchValueType.Keyword, Runtime.Compile("input.customer")),
            new("region", SearchValueType.Keyword, Runtime.Compile("vars.region ?? input.region ?? null")),
        };

        var values = SearchAttributeEvaluation.Evaluate(attributes, scope, _ => true)!;

        Assert.False(scope.IsOpen);
        Assert.Equal(["C-1", "EU"], values.Select(v => v.Value));
    }

    [Fact]
    public void Text_that_is_not_well_formed_utf16_goes_to_the_engine_and_fails_no_run()
    {
        // An unescaped lone surrogate in the input's text: the JSON reader refuses it, the engine reads it.
        var scope = Runtime.OpenScope("{}", "{\"a\":\"x\",\"b\":\"\uD800\"}", null, () => "null");
        var attributes = new List<SearchAttribute> { new("a", SearchValueType.Keyword, Runtime.Compile("input.a")) };

        var values = SearchAttributeEvaluation.Evaluate(attributes, scope, _ => true)!;

        Assert.Equal("x", Assert.Single(values).Value);
    }
}
