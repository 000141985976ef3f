using System.Diagnostics.CodeAnalysis;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using WorkflowService.Engine.Expressions;

namespace WorkflowService.Engine.Definitions;

/// <summary>Validates a definition document and reports every problem at once, each with its JSON path.</summary>
public sealed partial class DefinitionCompiler(ExpressionRuntime expressions)
{
    public static readonly JsonSerializerOptions JsonOptions = new(JsonSerializerDefaults.Web)
    {
        DefaultIgnoreCondition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull,
        WriteIndented = false,
        // A misspelt field must be reported, not silently ignored.
        UnmappedMemberHandling = System.Text.Json.Serialization.JsonUnmappedMemberHandling.Disallow,
    };

    /// <summary>The methods an http step may use.</summary>
    public static readonly string[] HttpMethods = ["GET", "POST", "PUT", "PATCH", "DELETE"];

    /// <summary>The longest an http step may wait for one attempt.</summary>
    public static readonly TimeSpan MaxCallOutTimeout = TimeSpan.FromMinutes(5);

    /// <summary>The longest timer or timeout a definition may ask for (100 years).</summary>
    public static readonly TimeSpan MaxDuration = TimeSpan.FromDays(36500);

    [GeneratedRegex("^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")]
    private static partial Regex NamePattern();

    [GeneratedRegex("^[A-Za-z_$][A-Za-z0-9_$]{0,63}$")]
    private static partial Regex VariablePattern();

    internal static bool IsValidVariable(string name) => VariablePattern().IsMatch(name);

    /// <summary>
    /// What is wrong with <paramref name="name"/> as a variable a step assigns (a key of <c>set</c>, an <c>output</c>, an
    /// <c>errorOutput</c>); null when nothing. Beyond the pattern, <c>__proto__</c> is refused: the variables are one
    /// JavaScript object (<c>vars</c>), where assigning <c>__proto__</c> replaces the object's prototype and stores
    /// nothing. (An initial variable of that name is parsed from JSON as an ordinary property and is kept: it stays valid.)
    /// </summary>
    internal static string? AssignedVariableProblem(string name) =>
        !IsValidVariable(name) ? $"'{name}' is not a valid variable name"
        : name == "__proto__" ? $"'{name}' is reserved and cannot be assigned"
        : null;

    public static bool IsValidName([NotNullWhen(true)] string? name) => name is not null && NamePattern().IsMatch(name);

    /// <summary>Parses JSON text into a document; syntax errors come back as diagnostics, not exceptions.</summary>
    public static DefinitionDocument? Parse(string json, List<Diagnostic> diagnostics)
    {
        try
        {
            var doc = JsonSerializer.Deserialize<DefinitionDocument>(json, JsonOptions);
            if (doc is null)
            {
                diagnostics.Add(new Diagnostic("$", "the definition must be a JSON object"));
            }

            return doc;
        }
        catch (JsonException e)
        {
            // Reading stops at the first problem; it is told in the definition's own terms (System.Text.Json's message names
            // the engine's types).
            var problem = JsonReadProblem.Explain(e, typeof(DefinitionDocument), JsonOptions, Describe);
            diagnostics.Add(new Diagnostic(problem.Path, problem.IsSyntax ? $"invalid JSON: {problem.Reason}" : UnknownStepField(json, problem) ?? problem.Reason));
            return null;
        }
    }

    /// <summary>
    /// Steps and branches in the definition's terms. Read as one object each, their fields are those of every step type
    /// (every kind of branch) together, which is not what any one step takes.
    /// </summary>
    private static string? Describe(Type type) =>
        type == typeof(StepDocument) ? $"a step: a JSON object with an id, a type (one of: {string.Join(", ", Types.Keys)}) and the fields of that type"
        : type == typeof(BranchDocument) ? "a branch: a JSON object with when and next (of a decision step) or name and steps (of a parallel step)"
        : null;

    /// <summary>
    /// A field a step does not have, told with the fields its type takes (issue #37: a fail step with "error" for
    /// "reason"). The reader only knows the fields of every step type together; null when the step has no known type.
    /// </summary>
    private static string? UnknownStepField(string json, JsonReadProblem problem)
    {
        if (problem is not { UnknownField: { } field, ObjectPath: { } at }
            || (problem.ObjectType != typeof(StepDocument) && problem.ObjectType != typeof(BranchDocument)))
        {
            return null;
        }

        // A branch is told by the type of the step it belongs to: $.steps[0].branches[1] is a branch of $.steps[0].
        var isBranch = problem.ObjectType == typeof(BranchDocument);
        var stepEnd = isBranch ? at.LastIndexOf(".branches[", StringComparison.Ordinal) : at.Length;
        if (stepEnd < 0)
        {
            return null;
        }

        JsonNode? step;
        try
        {
            step = JsonReadProblem.NodeAt(JsonNode.Parse(json), at[..stepEnd]);
        }
        catch (Exception ex) when (ex is JsonException or ArgumentException or InvalidOperationException)
        {
            // Text after the unknown field that does not parse (or repeats a field): the reader's own words serve.
            return null;
        }

        if (step?["type"] is not JsonValue value || !value.TryGetValue<string>(out var name) || !Types.TryGetValue(name, out var type))
        {
            return null;
        }

        return (isBranch, name) switch
        {
            (false, _) => $"unknown field '{field}' at {at}; a {name} step takes: {string.Join(", ", StepCompilation.Fields(type))}",
            (true, StepKindNames.Decision) => $"unknown field '{field}' at {at}; a branch of a decision step takes: when, next",
            (true, StepKindNames.Parallel) => $"unknown field '{field}' at {at}; a branch of a parallel step takes: name, steps",
            _ => null,
        };
    }

    /// <summary>Compiles a document; returns null and fills <paramref name="diagnostics"/> when it is invalid.</summary>
    public CompiledDefinition? Compile(DefinitionDocument document, int version, List<Diagnostic> diagnostics)
    {
        var start = diagnostics.Count;
        if (!IsValidName(document.Name))
        {
            diagnostics.Add(new Diagnostic("$.name",
                "name is required: 1-100 characters, letters, digits, '.', '_' or '-', starting with a letter or digit"));
        }

        if (document.Variables is { } variables)
        {
            foreach (var (key, _) in variables)
            {
                if (!VariablePattern().IsMatch(key))
                {
                    diagnostics.Add(new Diagnostic($"$.variables.{key}", $"'{key}' is not a valid variable name"));
                }
            }
        }

        var searchAttributes = SearchAttributeCompilation.Compile(document.SearchAttributes, expressions, diagnostics);
        var steps = document.Steps ?? [];
        if (steps.Count == 0)
        {
            diagnostics.Add(new Diagnostic("$.steps", "a definition needs at least one step"));
        }

        // Every id of the definition (branch steps included) with where it is declared and the branch it lives in.
        var ids = new Dictionary<string, StepDeclaration>(StringComparer.Ordinal);
        DeclareIds(steps, "$.steps", null, ids, diagnostics);

        var compiled = new Dictionary<string, CompiledStep>(StringComparer.Ordinal);
        CompileList(steps, "$.steps", null, ids, compiled, diagnostics);

        if (document.OnCancel is not null)
        {
            if (!ids.TryGetValue(document.OnCancel, out var cancelStep))
            {
                diagnostics.Add(new Diagnostic("$.onCancel", $"no step has the id '{document.OnCancel}'"));
            }
            else if (cancelStep.Within is not null)
            {
                diagnostics.Add(new Diagnostic("$.onCancel",
                    $"'{document.OnCancel}' is inside {cancelStep.Within}; the cancel path must start at a step of the definition's own list"));
            }
            else if (diagnostics.Count == start)
            {
                foreach (var waiting in Reachable(document.OnCancel, compiled).Where(st => st.Waits))
                {
                    diagnostics.Add(new Diagnostic(ids[waiting.Id].Path,
                        $"the cancel path (onCancel '{document.OnCancel}') reaches '{waiting.Id}', which waits; a cancel path must end without waiting"));
                }
            }
        }

        if (diagnostics.Count > start)
        {
            return null;
        }

        var definition = new CompiledDefinition
        {
            Name = document.Name!,
            Version = version,
            Description = document.Description,
            StartStepId = steps[0].Id!,
            InitialVariablesJson = document.Variables?.ToJsonString() ?? "{}",
            // In the order of the document: each parallel step followed by the steps of its branches, each forEach by its body.
            Steps = steps.Select(st => compiled[st.Id!])
                .SelectMany(st => st switch
                {
                    ParallelStep parallel => parallel.ParallelBranches.SelectMany(b => b.Steps).Prepend(st),
                    ForEachStep forEach => forEach.Body.Prepend(st),
                    _ => [st],
                })
                .ToDictionary(st => st.Id, StringComparer.Ordinal),
            StepOrder = steps.Select(st => compiled[st.Id!]).ToList(),
            OnCancel = document.OnCancel,
            SearchAttributes = searchAttributes,
            Json = string.Empty,
        };
        return definition.WithJson(DefinitionDecompiler.ToJson(definition));
    }

    /// <summary>Where a step id is declared (its JSON path) and the parallel branch it belongs to (null: the definition's own list).</summary>
    internal sealed record StepDeclaration(string Path, ParallelScope? Within);

    /// <summary>Collects the ids of a list of steps and, recursively, of the branches of its parallel steps and the bodies of its forEach steps.</summary>
    [SuppressMessage("Performance", "CA1859:Use concrete types when possible for improved performance", Justification = "The nullable view is the point: JSON can put nulls into the lists the document declares non-null, and List<T> is invariant, so only the interface can be read as IReadOnlyList<StepDocument?>.")]
    private static void DeclareIds(IReadOnlyList<StepDocument?> steps, string path, ParallelScope? within,
        Dictionary<string, StepDeclaration> ids, List<Diagnostic> diagnostics)
    {
        for (var i = 0; i < steps.Count; i++)
        {
            var step = steps[i];
            var id = step?.Id;
            if (!IsValidName(id))
            {
                diagnostics.Add(new Diagnostic($"{path}[{i}].id", "id is required: letters, digits, '.', '_' or '-'"));
            }
            else if (ids.TryGetValue(id, out var first))
            {
                diagnostics.Add(new Diagnostic($"{path}[{i}].id", $"duplicate step id '{id}' (first used at {first.Path})"));
            }
            else
            {
                ids.Add(id, new StepDeclaration($"{path}[{i}]", within));
            }

            if (step is { Type: StepKindNames.Parallel, Branches: { } branches } && IsValidName(id))
            {
                for (var b = 0; b < branches.Count; b++)
                {
                    if (branches[b] is { Steps: { } inner } branch)
                    {
                        DeclareIds(inner, $"{path}[{i}].branches[{b}].steps", new ParallelScope(id, branch.Name ?? $"#{b}"), ids, diagnostics);
                    }
                }
            }
            else if (step is { Type: StepKindNames.ForEach } && IsValidName(id) && ForEachStep.BodyOf(step) is { } body)
            {
                DeclareIds(body, $"{path}[{i}].{(step.Steps is null ? "definition" : "steps")}", ParallelScope.BodyOf(id), ids, diagnostics);
            }
        }
    }

    /// <summary>Compiles a list of steps (the definition's own, or a parallel branch's) into <paramref name="compiled"/>.</summary>
    private List<CompiledStep> CompileList(IReadOnlyList<StepDocument?> steps, string path, ParallelScope? within,
        Dictionary<string, StepDeclaration> ids, Dictionary<string, CompiledStep> compiled, List<Diagnostic> diagnostics)
    {
        var list = new List<CompiledStep>();
        for (var i = 0; i < steps.Count; i++)
        {
            var step = steps[i];
            if (step is null)
            {
                diagnostics.Add(new Diagnostic($"{path}[{i}]", "a step must be an object"));
                continue;
            }

            var following = i + 1 < steps.Count ? steps[i + 1]?.Id : null;
            var result = CompileStep(step, $"{path}[{i}]", following, within, ids, compiled, diagnostics);
            if (result is not null && step.Id is not null && compiled.TryAdd(step.Id, result))
            {
                list.Add(result);
            }
        }

        return list;
    }

    /// <summary>Every step reachable from <paramref name="from"/> along next, timeout, branch, otherwise and error edges, and into parallel branches.</summary>
    public static IEnumerable<CompiledStep> Reachable(string from, IReadOnlyDictionary<string, CompiledStep> steps)
    {
        var seen = new HashSet<string>(StringComparer.Ordinal);
        var pending = new Stack<string>();
        pending.Push(from);
        while (pending.TryPop(out var id))
        {
            if (!seen.Add(id) || !steps.TryGetValue(id, out var step))
            {
                continue;
            }

            yield return step;
            foreach (var next in step.Successors())
            {
                pending.Push(next);
            }
        }
    }

    /// <summary>Every step type by the name a document gives it, in the order the compiler lists them.</summary>
    private static readonly Dictionary<string, StepType> Types = new(StringComparer.Ordinal)
    {
        [StepKindNames.Assign] = AssignStep.Type,
        [StepKindNames.WaitForSignal] = WaitForSignalStep.Type,
        [StepKindNames.Delay] = DelayStep.Type,
        [StepKindNames.Decision] = DecisionStep.Type,
        [StepKindNames.HumanTask] = HumanTaskStep.Type,
        [StepKindNames.Complete] = CompleteStep.Type,
        [StepKindNames.Fail] = FailStep.Type,
        [StepKindNames.Emit] = EmitStep.Type,
        [StepKindNames.Http] = HttpStep.Type,
        [StepKindNames.SubWorkflow] = SubWorkflowStep.Type,
        [StepKindNames.Parallel] = ParallelStep.Type,
        [StepKindNames.ForEach] = ForEachStep.Type,
    };

    private CompiledStep? CompileStep(StepDocument step, string path, string? following, ParallelScope? within,
        Dictionary<string, StepDeclaration> ids, Dictionary<string, CompiledStep> compiled, List<Diagnostic> diagnostics)
    {
        if (step.Type is null || !Types.TryGetValue(step.Type, out var type))
        {
            diagnostics.Add(new Diagnostic($"{path}.type", $"type must be one of: {string.Join(", ", Types.Keys)}"));
            return null;
        }

        return new StepCompilation(step, path, within, expressions, ids, diagnostics,
                (branch, branchPath, scope) => CompileList(branch, branchPath, scope, ids, compiled, diagnostics))
            .Compile(type, following);
    }

}
