using System.Text.Json;
using Jint;
using JsEngine = Jint.Engine;
using WorkflowService.Engine.Expressions;

namespace WorkflowService.UnitTests.Expressions;

/// <summary>The scope's JSON reader gives what JSON.parse gives, checked against the engine's own JSON.parse.</summary>
public sealed class JsonValuesTests
{
    [Theory]
    [InlineData("""{"b":1,"a":[2.5,"x",true,false,null],"c":{"d":{}}}""")]
    [InlineData("""{"a":1,"b":2,"a":3}""")]
    [InlineData("""{"__proto__":{"polluted":true},"x":1}""")]
    [InlineData("""{"0":"zero","10":"ten","1":"one","k":"key"}""")]
    [InlineData("""["\u00e9\ud83d\ude00","line\nbreak","quote\"",""]""")]
    [InlineData("""[1e400,-0,123456789012345678901234567890,0.1,-5e-324]""")]
    [InlineData("  42  ")]
    [InlineData("\"text\"")]
    [InlineData("null")]
    public void Reads_json_as_json_parse_does(string json) => Assert.True(SameAsJsonParse(json), json);

    private static bool SameAsJsonParse(string json)
    {
        var engine = new JsEngine(o => o.Strict());
        engine.SetValue("ours", JsonValues.Parse(engine, json));
        engine.SetValue("text", json);
        // The same text, the same structure: compared through JSON.stringify, with prototypes, own keys and -0 checked apart.
        return engine.Evaluate("""
            (() => {
              const theirs = JSON.parse(text);
              const same = (a, b) => {
                if (Object.is(a, b)) return true;
                if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
                if (Array.isArray(a) !== Array.isArray(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
                const ka = Reflect.ownKeys(a), kb = Reflect.ownKeys(b);
                return ka.length === kb.length && ka.every((k, i) => k === kb[i] && same(a[k], b[k]));
              };
              return same(ours, theirs);
            })()
            """).AsBoolean();
    }

    [Theory]
    [InlineData("")]
    [InlineData("{")]
    [InlineData("""{"a":1,}""")]
    [InlineData("[1] 2")]
    [InlineData("{'a':1}")]
    [InlineData("// comment\n1")]
    public void Refuses_what_json_parse_refuses_with_its_error(string json)
    {
        var engine = new JsEngine();
        Assert.ThrowsAny<Jint.Runtime.JavaScriptException>(() => JsonValues.Parse(engine, json));
    }

    [Fact]
    public void Takes_what_json_parse_takes_and_the_fast_reader_refuses()
    {
        // An escaped unpaired surrogate (JSON.stringify writes one for half an emoji), a raw one, and deep nesting.
        Assert.True(SameAsJsonParse("\"\\ud800x\""));
        Assert.True(SameAsJsonParse("[\"a\ud800b\"]"));
        Assert.True(SameAsJsonParse(new string('[', JsonValues.MaxDepth) + new string(']', JsonValues.MaxDepth)));
    }

    [Fact]
    public void Nesting_json_parse_refuses_is_refused_with_its_error()
    {
        var deep = new string('[', 80) + new string(']', 80);
        Assert.ThrowsAny<Jint.Runtime.JavaScriptException>(() => new JsEngine().Evaluate($"JSON.parse('{deep}')"));
        Assert.ThrowsAny<Jint.Runtime.JavaScriptException>(() => JsonValues.Parse(new JsEngine(), deep));
    }

    [Fact]
    public void Long_texts_past_the_stack_buffer_read_the_same()
    {
        var json = "[" + string.Join(",", Enumerable.Range(0, 2000).Select(i => $"{{\"n\":{i},\"s\":\"é{i}\"}}")) + "]";
        Assert.True(SameAsJsonParse(json));
    }
}
