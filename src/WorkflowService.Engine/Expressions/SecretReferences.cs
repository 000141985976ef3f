using System.Diagnostics.CodeAnalysis;
using System.Text.RegularExpressions;
using Acornima.Ast;

namespace WorkflowService.Engine.Expressions;

/// <summary>
/// <c>secret('name')</c> in an http step's url, headers or body. The engine never sees a secret's value: the call
/// evaluates to a reference, <c>{{secret:name:nonce}}</c>, with a nonce drawn for the run, and the node that performs
/// the call-out puts the value in its place (from <c>CallOuts:Secrets:name</c>) as the request is sent. Text that
/// merely looks like a reference (from input or variables) does not carry the run's nonce and is sent as it is.
/// Everything shown to a reader (history, the signal's payload, errors) carries the redacted form, <c>{{secret:name}}</c>.
/// </summary>
public static partial class SecretReferences
{
    /// <summary>The global function an http step's expressions call.</summary>
    public const string FunctionName = "secret";

    /// <summary>What a secret's name may be: letters, digits, '.', '_' and '-', up to 64 characters.</summary>
    public static bool IsValidName([NotNullWhen(true)] string? name) => name is not null && NamePattern().IsMatch(name);

    public static string Format(string name, string nonce) => $"{{{{secret:{name}:{nonce}}}}}";

    /// <summary>The references in <paramref name="text"/> that carry <paramref name="nonce"/>, each replaced by what <paramref name="value"/> gives.</summary>
    public static string Resolve(string text, string nonce, Func<string, string> value) =>
        !text.Contains("{{secret:", StringComparison.Ordinal) ? text : Reference().Replace(text, m =>
            m.Groups["nonce"].Value == nonce ? value(m.Groups["name"].Value) : m.Value);

    /// <summary>Whether <paramref name="text"/> holds a reference with <paramref name="nonce"/>.</summary>
    public static bool Refers(string text, string nonce) =>
        text.Contains("{{secret:", StringComparison.Ordinal) && Reference().Matches(text).Any(m => m.Groups["nonce"].Value == nonce);

    /// <summary>Every reference shown by name only: <c>{{secret:name}}</c>.</summary>
    public static string Redact(string text) =>
        !text.Contains("{{secret:", StringComparison.Ordinal) ? text : Reference().Replace(text, m => $"{{{{secret:{m.Groups["name"].Value}}}}}");

    /// <summary>
    /// The secrets an expression names, or why it may not: <c>secret</c> may only be called directly, with one string
    /// literal (so that no data chooses which secret is sent), and is not a value to pass around.
    /// </summary>
    internal static (IReadOnlyList<string> Names, string? Error) Find(Node expression)
    {
        List<string>? names = null;
        int mentions = 0, harmless = 0;
        foreach (var node in expression.DescendantNodesAndSelf())
        {
            switch (node)
            {
                case Identifier { Name: FunctionName }:
                    mentions++;
                    break;
                case CallExpression { Callee: Identifier { Name: FunctionName } } call:
                    if (call.Arguments is not [StringLiteral { Value: var name }] || !IsValidName(name))
                    {
                        return ([], "secret() takes one name in quotes: letters, digits, '.', '_' or '-', up to 64 characters, such as secret('billing-api')");
                    }

                    (names ??= []).Add(name);
                    harmless++;
                    break;
                case MemberExpression { Computed: false, Property: Identifier { Name: FunctionName } }:
                case Property { Computed: false, Shorthand: false, Key: Identifier { Name: FunctionName } }:
                    // obj.secret and { secret: ... } name a property, not the function.
                    harmless++;
                    break;
            }
        }

        return mentions > harmless
            ? ([], "secret can only be called, as secret('name'); it is not a value to pass around")
            : (names is null ? [] : names.Distinct(StringComparer.Ordinal).ToList(), null);
    }

    [GeneratedRegex("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
    private static partial Regex NamePattern();

    [GeneratedRegex(@"\{\{secret:(?<name>[A-Za-z0-9][A-Za-z0-9._-]{0,63}):(?<nonce>[0-9a-f]{32})\}\}")]
    private static partial Regex Reference();
}
