using Acornima.Ast;
using Jint;
using Jint.Native;
using Jint.Runtime.Interop;
using Jint.Runtime;
using Jint.Runtime.Descriptors;
using JsEngine = Jint.Engine;

namespace WorkflowService.Engine.Expressions;

/// <summary>
/// Bounds the string methods whose result a script sizes with a number: <c>'x'.repeat(n)</c>, <c>padStart(n)</c> and
/// <c>padEnd(n)</c> build the whole string in one call, before the memory limit is checked at the next statement.
/// Each is replaced by one that refuses a result longer than <c>Expressions:MaxStringLength</c> with a
/// <c>RangeError</c> (which a script can catch, like V8's own "Invalid string length") and otherwise calls the original.
/// Installing them builds the engine's whole <c>String.prototype</c> (about 9 µs, as much as the rest of the engine), so
/// a scope installs them before the first expression that <see cref="MayReach"/> them, and most runs never do.
/// </summary>
internal static class StringLimits
{
    /// <summary>
    /// Names through which a script can reach the three methods: the methods themselves, and the ways to a prototype or
    /// to code built from text. An expression that uses none of them, and reads no property by a computed key, cannot
    /// call them.
    /// </summary>
    private static readonly HashSet<string> Reaching = new(StringComparer.Ordinal)
    {
        "repeat", "padStart", "padEnd", "prototype", "constructor", "__proto__", "getPrototypeOf", "getOwnPropertyDescriptor",
        "getOwnPropertyDescriptors", "Reflect", "eval", "Function", "String",
    };

    /// <summary>Whether <paramref name="expression"/> may call <c>repeat</c>, <c>padStart</c> or <c>padEnd</c>.</summary>
    public static bool MayReach(Acornima.Ast.Node expression) => expression.DescendantNodesAndSelf().Any(node => node switch
    {
        Acornima.Ast.Identifier { Name: var name } => Reaching.Contains(name),
        Acornima.Ast.StringLiteral { Value: var value } => Reaching.Contains(value),
        Acornima.Ast.MemberExpression { Computed: true, Property: not (Acornima.Ast.NumericLiteral or Acornima.Ast.StringLiteral) } => true,
        _ => false,
    });

    public static void Install(JsEngine engine, int maxLength)
    {
        var prototype = engine.GetValue("String").AsObject().Get("prototype").AsObject();
        Wrap(engine, prototype, "repeat", maxLength, (text, args) => text.Length * Math.Max(0, ToLength(args, 0)));
        Wrap(engine, prototype, "padStart", maxLength, (_, args) => ToLength(args, 0));
        Wrap(engine, prototype, "padEnd", maxLength, (_, args) => ToLength(args, 0));
    }

    private static void Wrap(JsEngine engine, Jint.Native.Object.ObjectInstance prototype, string name, int maxLength, Func<string, JsValue[], double> resultLength)
    {
        var original = prototype.Get(name);
        var bounded = new ClrFunction(engine, name, (thisObject, args) =>
        {
            // A primitive string is measured here (a String object or other this is rare); the original does the spec's coercions and errors.
            if (thisObject is JsString text && resultLength(text.ToString(), args) > maxLength)
            {
                throw new JavaScriptException(engine.Construct("RangeError",
                    $"Invalid string length: {name} would make more than {maxLength} characters (Expressions:MaxStringLength)"));
            }

            return engine.Call(original, thisObject, args);
        }, length: 1);
        prototype.DefineOwnProperty(name, new PropertyDescriptor(bounded, writable: true, enumerable: false, configurable: true));
    }

    private static double ToLength(JsValue[] args, int index) =>
        args.Length > index && !args[index].IsUndefined() ? TypeConverter.ToNumber(args[index]) : 0;
}
