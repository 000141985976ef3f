using System.Text.Json;
using System.Text.Json.Nodes;
using System.Xml;

namespace WorkflowService.Engine.Definitions;

/// <summary>
/// Turns a compiled definition back into its canonical document: steps in their order, `next` written only where it
/// does not fall through to the following step, durations in canonical ISO 8601, empty parts left out. Compiling the
/// canonical document yields the same definition, and decompiling that yields the same text.
/// </summary>
public static class DefinitionDecompiler
{
    public static DefinitionDocument Decompile(CompiledDefinition definition)
    {
        var document = new DefinitionDocument
        {
            Name = definition.Name,
            Description = definition.Description,
            Variables = JsonNode.Parse(definition.InitialVariablesJson) is JsonObject { Count: > 0 } variables ? variables : null,
            OnCancel = definition.OnCancel,
            Steps = DecompileList(definition.StepOrder),
        };
        return document;
    }

    /// <summary>A list of steps (the definition's own, or a parallel branch's), `next` written only where it does not fall through.</summary>
    private static List<StepDocument> DecompileList(IReadOnlyList<CompiledStep> steps)
    {
        var list = new List<StepDocument>();
        for (var i = 0; i < steps.Count; i++)
        {
            var step = steps[i];
            var following = i + 1 < steps.Count ? steps[i + 1].Id : null;
            list.Add(new StepDocument
            {
                Id = step.Id,
                Type = StepKindNames.ByName.First(k => k.Value == step.Kind).Key,
                Description = step.Description,
                Next = step.Next is not null && step.Next != following ? step.Next : null,
                Set = step.Assignments.Count > 0 ? step.Assignments.ToDictionary(a => a.Key, a => a.Value.Source) : null,
                Signal = step.Signal,
                Timeout = step.Timeout is { } timeout ? XmlConvert.ToString(timeout) : null,
                OnTimeout = step.OnTimeout,
                Output = step.Output,
                Duration = step.Duration is { } duration ? XmlConvert.ToString(duration) : null,
                Branches = step.Branches.Count > 0 ? step.Branches.Select(b => new BranchDocument { When = b.When.Source, Next = b.Next }).ToList()
                    : step.ParallelBranches.Count > 0 ? step.ParallelBranches.Select(b => new BranchDocument { Name = b.Name, Steps = DecompileList(b.Steps) }).ToList()
                    : null,
                Otherwise = step.Otherwise,
                Title = step.Title,
                Assignee = step.Assignee?.Source,
                Role = step.Role,
                Data = step.Data?.Source,
                Result = step.Result?.Source,
                Reason = step.Reason?.Source,
                OnError = step.OnError,
                ErrorOutput = step.ErrorOutput,
                Method = step.Method,
                Url = step.Url?.Source,
                Body = step.Body?.Source,
                Headers = step.Headers.Count > 0 ? step.Headers.ToDictionary(h => h.Key, h => h.Value.Source) : null,
                Retries = step.Retries,
                Definition = step.Definition,
                Version = step.DefinitionVersion,
                Input = step.Input?.Source,
            });
        }

        return list;
    }

    public static string ToJson(CompiledDefinition definition) =>
        JsonSerializer.Serialize(Decompile(definition), DefinitionCompiler.JsonOptions);
}
