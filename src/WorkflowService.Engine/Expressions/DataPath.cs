using System.Globalization;
using System.Text.Json;
using Acornima;
using Acornima.Ast;

namespace WorkflowService.Engine.Expressions;

/// <summary>
/// An expression that only reads <c>input</c> and <c>vars</c> by literal keys, such as <c>input.customer</c> or
/// <c>vars.region ?? input.region ?? null</c>: member access (<c>.name</c>, <c>['name']</c>, <c>[0]</c>, <c>?.</c>),
/// <c>??</c>, and literals. It can be read from the variables' and the input's JSON text without a JavaScript engine,
/// giving what the engine would give (<see cref="ExpressionScope.EvaluateToPlain"/>). Where the JSON alone cannot say
/// (a key that is not the value's own and may be a built-in's member, a number too large for a double), it answers
/// <see cref="DataPathResult.NeedsEngine"/> and the engine evaluates the expression as always.
/// </summary>
public sealed class DataPath
{
    /// <summary>Members every object, array or string has from its prototype: reading one gives no plain value.</summary>
    private static readonly HashSet<string> InheritedNames = new(StringComparer.Ordinal)
    {
        "constructor", "__proto__", "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__",
        "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "toLocaleString", "toString", "valueOf",
    };

    private readonly IReadOnlyList<Term> _terms;

    private DataPath(IReadOnlyList<Term> terms)
    {
        _terms = terms;
        ReadsVariables = terms.Any(t => t.Root == "vars");
        ReadsInput = terms.Any(t => t.Root == "input");
    }

    /// <summary>Whether the path reads <c>vars</c> (else its JSON need not be read).</summary>
    public bool ReadsVariables { get; }

    /// <summary>Whether the path reads <c>input</c> (else its JSON need not be read).</summary>
    public bool ReadsInput { get; }

    /// <summary>One operand of <c>??</c>: a literal (no <see cref="Root"/>; null for null and undefined), or a root and its keys.</summary>
    private sealed record Term(string? Root, object? Constant, IReadOnlyList<(string Key, bool Optional)> Keys)
    {
        public static Term Literal(object? value) => new(null, value, []);
    }

    /// <summary>The data path <paramref name="expression"/> is, or null when it is anything else.</summary>
    internal static DataPath? Of(Node expression)
    {
        var terms = new List<Term>();
        return Collect(expression, terms) ? new DataPath(terms) : null;
    }

    private static bool Collect(Node node, List<Term> terms)
    {
        switch (node)
        {
            case LogicalExpression { Operator: Operator.NullishCoalescing } either:
                return Collect(either.Left, terms) && Collect(either.Right, terms);
            case StringLiteral text:
                terms.Add(Term.Literal(text.Value));
                return true;
            case NumericLiteral number:
                terms.Add(Term.Literal(number.Value));
                return true;
            case BooleanLiteral flag:
                terms.Add(Term.Literal(flag.Value));
                return true;
            case NullLiteral:
                terms.Add(Term.Literal(null));
                return true;
            case Identifier { Name: "undefined" }:
                terms.Add(Term.Literal(null));
                return true;
            case ChainExpression chain:
                return Collect(chain.Expression, terms);
            case MemberExpression or Identifier { Name: "input" or "vars" }:
                var keys = new List<(string, bool)>();
                var current = node;
                while (current is MemberExpression member)
                {
                    var key = member.Property switch
                    {
                        Identifier { Name: var name } when !member.Computed => name,
                        StringLiteral { Value: var name } when member.Computed => name,
                        NumericLiteral { Value: var index } when member.Computed && index >= 0 && index < int.MaxValue && index == Math.Floor(index)
                            => ((int)index).ToString(CultureInfo.InvariantCulture),
                        _ => null,
                    };
                    if (key is null)
                    {
                        return false;
                    }

                    keys.Insert(0, (key, member.Optional));
                    current = member.Object;
                }

                if (current is not Identifier { Name: "input" or "vars" } root)
                {
                    return false;
                }

                terms.Add(new Term(root.Name, null, keys));
                return true;
            default:
                return false;
        }
    }

    /// <summary>
    /// Reads the path from the JSON of the variables and the input (null: no input, as the engine's <c>input</c> is
    /// then null).
    /// </summary>
    public DataPathResult Evaluate(JsonElement variables, JsonElement? input)
    {
        foreach (var term in _terms)
        {
            if (term.Root is null)
            {
                if (term.Constant is not null)
                {
                    return DataPathResult.Of(term.Constant);
                }

                continue;
            }

            DataPathResult read;
            try
            {
                read = Read(term, term.Root == "vars" ? variables : input);
            }
            catch (Exception e) when (e is InvalidOperationException or ArgumentException)
            {
                // A key that is not well-formed UTF-16, looked up or met on the way: the engine's to read.
                return DataPathResult.NeedsEngine;
            }

            if (read.Outcome != DataPathOutcome.Value || read.Value is not null)
            {
                return read;
            }
        }

        // Every operand null or undefined: the value is the last one, null either way.
        return DataPathResult.Of(null);
    }

    private static DataPathResult Read(Term term, JsonElement? root)
    {
        var current = root;
        for (var i = 0; i < term.Keys.Count; i++)
        {
            var (key, optional) = term.Keys[i];
            if (current is not { } value || value.ValueKind == JsonValueKind.Null)
            {
                // a?.b of null or undefined ends the chain with undefined; a.b throws.
                return optional ? DataPathResult.Of(null) : DataPathResult.Throws;
            }

            switch (value.ValueKind)
            {
                case JsonValueKind.Object:
                    if (value.TryGetProperty(key, out var property))
                    {
                        // The last of duplicate keys, as JSON.parse keeps it.
                        current = property;
                    }
                    else if (InheritedNames.Contains(key))
                    {
                        return DataPathResult.NeedsEngine;
                    }
                    else
                    {
                        current = null;
                    }

                    break;
                case JsonValueKind.Array when key == "length" && i == term.Keys.Count - 1:
                    return DataPathResult.Of((double)value.GetArrayLength());
                case JsonValueKind.Array when IsIndex(key, out var index):
                    current = index < value.GetArrayLength() ? value[index] : null;
                    break;
                default:
                    // A string's characters, a number's or a bool's members, an array's methods: the engine's to say.
                    return DataPathResult.NeedsEngine;
            }
        }

        if (current is not { } result)
        {
            return DataPathResult.Of(null);
        }

        switch (result.ValueKind)
        {
            case JsonValueKind.String:
                try
                {
                    return DataPathResult.Of(result.GetString());
                }
                catch (InvalidOperationException)
                {
                    // A lone surrogate: the engine has it as text that is not well formed, which no attribute keeps.
                    return DataPathResult.NeedsEngine;
                }

            case JsonValueKind.Number:
                return result.TryGetDouble(out var number) && double.IsFinite(number) ? DataPathResult.Of(number) : DataPathResult.NeedsEngine;
            case JsonValueKind.True:
                return DataPathResult.Of(true);
            case JsonValueKind.False:
                return DataPathResult.Of(false);
            case JsonValueKind.Null:
                return DataPathResult.Of(null);
            default:
                // An object or an array: as JSON text, which the attribute's conversion reads.
                return DataPathResult.Of(new JsonText(result.GetRawText()));
        }
    }

    private static bool IsIndex(string key, out int index)
    {
        index = 0;
        return key.Length > 0 && (key.Length == 1 || key[0] != '0')
            && int.TryParse(key, NumberStyles.None, CultureInfo.InvariantCulture, out index);
    }
}

public enum DataPathOutcome
{
    /// <summary>The expression's value (a string, a double, a bool, a <see cref="JsonText"/>, or null).</summary>
    Value,

    /// <summary>The expression throws (a member of null or undefined without <c>?.</c>).</summary>
    Throws,

    /// <summary>The JSON alone cannot say: evaluate the expression in the engine.</summary>
    NeedsEngine,
}

public readonly record struct DataPathResult(DataPathOutcome Outcome, object? Value)
{
    public static DataPathResult Throws => new(DataPathOutcome.Throws, null);

    public static DataPathResult NeedsEngine => new(DataPathOutcome.NeedsEngine, null);

    public static DataPathResult Of(object? value) => new(DataPathOutcome.Value, value);
}
