using Acornima.Ast;
using Jint;

namespace WorkflowService.Engine.Expressions;

/// <summary>An expression parsed once at compile time and evaluated many times.</summary>
public sealed class CompiledExpression
{
    internal CompiledExpression(string source, Prepared<Script> script)
    {
        Source = source;
        Script = script;
    }

    public string Source { get; }
    internal Prepared<Script> Script { get; }
}
