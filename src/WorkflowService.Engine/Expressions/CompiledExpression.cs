using Acornima.Ast;
using Jint;

namespace WorkflowService.Engine.Expressions;

/// <summary>An expression parsed once at compile time and evaluated many times.</summary>
public sealed class CompiledExpression
{
    internal CompiledExpression(string source, Prepared<Script> script, IReadOnlyList<string>? secrets = null, bool mayBuildLongStrings = true,
        ExpressionReads reads = ExpressionReads.Anything, DataPath? dataPath = null)
    {
        Reads = reads;
        DataPath = dataPath;
        Source = source;
        Script = script;
        Secrets = secrets ?? [];
        MayBuildLongStrings = mayBuildLongStrings;
    }

    /// <summary>Whether the expression may reach <c>repeat</c>, <c>padStart</c> or <c>padEnd</c> (see <see cref="StringLimits"/>).</summary>
    internal bool MayBuildLongStrings { get; }

    public string Source { get; }

    /// <summary>What the expression's value can change with (<see cref="ExpressionDependencies"/>).</summary>
    public ExpressionReads Reads { get; }

    /// <summary>The expression as a path into <c>input</c> and <c>vars</c>, readable from their JSON; null when it is not one.</summary>
    public DataPath? DataPath { get; }

    /// <summary>The secrets the expression names with <c>secret('name')</c> (see <see cref="SecretReferences"/>).</summary>
    public IReadOnlyList<string> Secrets { get; }
    internal Prepared<Script> Script { get; }
}
