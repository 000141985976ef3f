using Acornima;
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

    /// <summary>Anything else (the signal, the instance, the clock, a function with statements of its own): it may change at any commit.</summary>
    Anything = 4,
}

/// <summary>
/// Finds what an expression reads from its syntax tree. An allow-list: whatever it cannot show to be a pure function of
/// <c>input</c> and <c>vars</c> reads <see cref="ExpressionReads.Anything"/>: a name it does not know, a function written
/// in the expression (but for an arrow function with an expression body: what it reads besides its parameters), a
/// built-in object (<c>Math</c>, <c>Date</c>, <c>Object</c>…) used other than through a member known to be pure, a
/// property reached by a computed key, or one that leads to a constructor.
/// </summary>
internal static class ExpressionDependencies
{
    /// <summary>Globals that are pure functions or constants, harmless as values.</summary>
    private static readonly HashSet<string> PureValues = new(StringComparer.Ordinal)
    {
        "parseInt", "parseFloat", "isNaN", "isFinite", "undefined", "NaN", "Infinity",
        "encodeURIComponent", "decodeURIComponent", "encodeURI", "decodeURI",
    };

    /// <summary>Built-in objects and their members known to be pure. The objects themselves are not values we follow.</summary>
    private static readonly Dictionary<string, HashSet<string>> PureMembers = new(StringComparer.Ordinal)
    {
        ["Math"] =
        [
            "abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil", "clz32", "cos", "cosh", "exp",
            "expm1", "floor", "fround", "hypot", "imul", "log", "log10", "log1p", "log2", "max", "min", "pow", "round", "sign",
            "sin", "sinh", "sqrt", "tan", "tanh", "trunc", "E", "LN10", "LN2", "LOG10E", "LOG2E", "PI", "SQRT1_2", "SQRT2",
        ],
        ["Date"] = ["UTC", "parse"],
        ["Object"] = ["keys", "values", "entries", "fromEntries", "assign", "hasOwn", "is", "freeze", "isFrozen", "groupBy"],
        ["JSON"] = ["parse", "stringify"],
        ["Array"] = ["isArray", "from", "of"],
        ["String"] = ["fromCharCode", "fromCodePoint"],
        ["Number"] =
        [
            "isInteger", "isFinite", "isNaN", "isSafeInteger", "parseFloat", "parseInt", "MAX_SAFE_INTEGER",
            "MIN_SAFE_INTEGER", "MAX_VALUE", "MIN_VALUE", "EPSILON", "POSITIVE_INFINITY", "NEGATIVE_INFINITY", "NaN",
        ],
        ["Boolean"] = [],
    };

    /// <summary>Built-ins that, called or constructed, give a function of their arguments (Date: only constructed, with arguments).</summary>
    private static readonly HashSet<string> PureCalls = new(StringComparer.Ordinal) { "Object", "Array", "String", "Number", "Boolean" };

    /// <summary>Property names that reach a constructor or a prototype's accessors: from there, any function.</summary>
    private static readonly HashSet<string> Escapes = new(StringComparer.Ordinal)
    {
        "constructor", "prototype", "__proto__", "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__",
    };

    public static ExpressionReads Of(Node expression)
    {
        var reads = ExpressionReads.None;
        Visit(expression, ref reads, Unbound);
        return reads;
    }

    private static readonly HashSet<string> Unbound = [];

    /// <param name="bound">The parameters of the arrow functions <paramref name="node"/> is in: local names, not globals.</param>
    private static void Visit(Node node, ref ExpressionReads reads, HashSet<string> bound)
    {
        switch (node)
        {
            case Identifier { Name: var local } when bound.Contains(local):
                return;
            case ArrowFunctionExpression { Body: Expression, Async: false } arrow when arrow.Params.All(p => p is Identifier):
                // x => f(x): a function of its parameters and of what its body reads besides (sort, map and reduce hand it
                // only elements of what they work over).
                Visit(arrow.Body, ref reads, [.. bound, .. arrow.Params.Select(p => ((Identifier)p).Name)]);
                return;
            case Identifier { Name: var name }:
                // Reached only where a name is used as a value: Math or Date passed, aliased or called reads anything.
                reads |= name switch
                {
                    "input" => ExpressionReads.Input,
                    "vars" => ExpressionReads.Variables,
                    _ when PureValues.Contains(name) => ExpressionReads.None,
                    _ => ExpressionReads.Anything,
                };
                return;
            case MemberExpression { Object: Identifier { Name: var owner } } member when !bound.Contains(owner) && PureMembers.TryGetValue(owner, out var members):
                // Math.max, Date.UTC: pure. Math.random, Date.now, Date.call, Math['random']: not.
                if (member.Computed || member.Property is not Identifier { Name: var memberName } || !members.Contains(memberName))
                {
                    reads |= ExpressionReads.Anything;
                }

                return;
            case CallExpression { Callee: Identifier { Name: var callee } } call when !bound.Contains(callee) && PureCalls.Contains(callee):
                VisitArguments(call.Arguments, ref reads, bound);
                return;
            case NewExpression { Callee: Identifier { Name: var type } } created when !bound.Contains(type) && (PureCalls.Contains(type) || type == "Date"):
                // new Date(x) is a function of x; new Date() and new Date(...xs) may read the clock.
                if (type == "Date" && (created.Arguments.Count == 0 || created.Arguments.Any(a => a is SpreadElement)))
                {
                    reads |= ExpressionReads.Anything;
                }

                VisitArguments(created.Arguments, ref reads, bound);
                return;
            // A destructuring pattern's keys reach properties unchecked ({ constructor: d } = new Date(0)); a class holds code.
            case ThisExpression or IFunction or ObjectPattern or IClass:
                reads |= ExpressionReads.Anything;
                return;
            case MemberExpression member:
                // a.b and a['b'] read a; b names a property, not a global. A computed key may name a constructor, which
                // leads to Function and Date.
                if (member.Property switch
                    {
                        Identifier { Name: var property } when !member.Computed => Escapes.Contains(property),
                        Literal { Value: string key } => Escapes.Contains(key),
                        Literal => false,
                        var key => !IsNumber(key),
                    })
                {
                    reads |= ExpressionReads.Anything;
                }

                Visit(member.Object, ref reads, bound);
                if (member.Computed)
                {
                    Visit(member.Property, ref reads, bound);
                }

                return;
            case Property { Computed: false } property:
                Visit(property.Value, ref reads, bound);
                return;
        }

        foreach (var child in node.ChildNodes)
        {
            Visit(child, ref reads, bound);
        }
    }

    /// <summary>Whether an expression always gives a number (so, as a key, never a constructor's name): arithmetic of numbers.</summary>
    private static bool IsNumber(Node node) => node switch
    {
        NumericLiteral or BigIntLiteral => true,
        // Every operator but + gives a number whatever its operands; + only when both are numbers.
        BinaryExpression { Operator: Operator.Addition } sum => IsNumber(sum.Left) && IsNumber(sum.Right),
        BinaryExpression { Operator: Operator.Subtraction or Operator.Multiplication or Operator.Division or Operator.Remainder
            or Operator.Exponentiation or Operator.BitwiseAnd or Operator.BitwiseOr or Operator.BitwiseXor or Operator.LeftShift
            or Operator.RightShift or Operator.UnsignedRightShift } => true,
        UnaryExpression { Operator: Operator.UnaryNegation or Operator.UnaryPlus or Operator.BitwiseNot } => true,
        _ => false,
    };

    private static void VisitArguments(IEnumerable<Node> arguments, ref ExpressionReads reads, HashSet<string> bound)
    {
        foreach (var argument in arguments)
        {
            Visit(argument, ref reads, bound);
        }
    }
}
