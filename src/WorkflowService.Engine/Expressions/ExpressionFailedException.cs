namespace WorkflowService.Engine.Expressions;

/// <summary>An expression threw, ran out of its time, memory or recursion budget, or produced an unusable value.</summary>
public sealed class ExpressionFailedException(string message, Exception? inner = null) : Exception(message, inner);
