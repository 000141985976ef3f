using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>The published definition and its stored record, or the diagnostics that stopped it.</summary>
public sealed record PublishResult(CompiledDefinition? Definition, DefinitionRecord? Record, IReadOnlyList<Diagnostic> Diagnostics);
