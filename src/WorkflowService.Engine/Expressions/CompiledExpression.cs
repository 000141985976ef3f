using Acornima.Ast;
using Jint;

namespace WorkflowService.Engine.Expressions;

/// <summary>An expression parsed once at compile time and evaluated many times.</summary>
public sealed class CompiledExpression
{
    internal CompiledExpression(string source, Prepared<Script> script, IReadOnlyList<string>? secrets = null)
    {
        Source = source;
        Script = script;
        Secrets = secrets ?? [];
    }

    public string Source { get; }

    /// <summary>The secrets the expression names with <c>secret('name')</c> (see <see cref="SecretReferences"/>).</summary>
    public IReadOnlyList<string> Secrets { get; }
    internal Prepared<Script> Script { get; }
}
