using System.Text.Json;
using System.Text.Json.Nodes;

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
            SearchAttributes = SearchAttributeCompilation.Decompile(definition.SearchAttributes),
        };
        return document;
    }

    /// <summary>A list of steps (the definition's own, or a parallel branch's), `next` written only where it does not fall through.</summary>
    internal static List<StepDocument> DecompileList(IReadOnlyList<CompiledStep> steps)
    {
        var list = new List<StepDocument>();
        for (var i = 0; i < steps.Count; i++)
        {
            var step = steps[i];
            var following = i + 1 < steps.Count ? steps[i + 1].Id : null;
            var document = new StepDocument { Id = step.Id, Description = step.Description };
            if (step is IContinuingStep { Next: { } next } && next != following)
            {
                document.Next = next;
            }

            if (step is IErrorHandlingStep { OnError: { } onError })
            {
                document.OnError = onError.Next;
                document.ErrorOutput = onError.Output;
            }

            step.Decompile(document);
            list.Add(document);
        }

        return list;
    }

    public static string ToJson(CompiledDefinition definition) =>
        JsonSerializer.Serialize(Decompile(definition), DefinitionCompiler.JsonOptions);
}
