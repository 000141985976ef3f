using Acornima.Ast;

namespace WorkflowService.Engine.Expressions;

/// <summary>What an expression's value can change with, as its text shows: the run's globals it reads.</summary>
[Flags]
public enum ExpressionReads
{
    /// <summary>Nothing that changes: literals and functions of their arguments alone.</summary>
    None = 0,

    /// <summary>The instance's input, which never changes after its start.</summary>
    Input = 1,

    /// <summary>The instance's variables.</summary>
    Variables = 2,

    /// <summary>Anything else (the signal, the instance, the clock, a function of its own): it may change at any commit.</summary>
    Anything = 4,
}

/// <summary>
/// Finds what an expression reads from its syntax tree. Conservative: whatever it cannot show to be a pure function of
/// <c>input</c> and <c>vars</c> (a name it does not know, a function written in the expression, the current time) reads
/// <see cref="ExpressionReads.Anything"/>.
/// </summary>
internal static class ExpressionDependencies
{
    /// <summary>Built-in globals whose results depend only on their arguments (Date's clock readings are caught apart).</summary>
    private static readonly HashSet<string> Pure = new(StringComparer.Ordinal)
    {
        "Math", "JSON", "String", "Number", "Boolean", "Array", "Object", "Date", "parseInt", "parseFloat", "isNaN", "isFinite",
        "undefined", "NaN", "Infinity", "encodeURIComponent", "decodeURIComponent", "encodeURI", "decodeURI",
    };

    public static ExpressionReads Of(Node expression)
    {
        var reads = ExpressionReads.None;
        Visit(expression, ref reads);
        return reads;
    }

    private static void Visit(Node node, ref ExpressionReads reads)
    {
        switch (node)
        {
            case Identifier { Name: var name }:
                reads |= name switch
                {
                    "input" => ExpressionReads.Input,
                    "vars" => ExpressionReads.Variables,
                    _ when Pure.Contains(name) => ExpressionReads.None,
                    _ => ExpressionReads.Anything,
                };
                return;
            // The clock and chance: Date.now(), new Date() without arguments, Date() called, Math.random(), and any member of
            // Date or Math chosen by a computed key (Date['now']).
            case MemberExpression { Object: Identifier { Name: "Date" }, Property: Identifier { Name: "now" } }:
            case MemberExpression { Object: Identifier { Name: "Math" }, Property: Identifier { Name: "random" } }:
            case MemberExpression { Object: Identifier { Name: "Date" or "Math" }, Computed: true }:
            case NewExpression { Callee: Identifier { Name: "Date" }, Arguments.Count: 0 }:
            case CallExpression { Callee: Identifier { Name: "Date" } }:
            case ThisExpression or IFunction:
                reads |= ExpressionReads.Anything;
                return;
            case MemberExpression { Computed: false } member:
                // a.b reads a; b names a property, not a global.
                Visit(member.Object, ref reads);
                return;
            case Property { Computed: false } property:
                Visit(property.Value, ref reads);
                return;
        }

        foreach (var child in node.ChildNodes)
        {
            Visit(child, ref reads);
        }
    }
}
