using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using System.Xml;
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

    public static bool IsValidName(string? name) => name is not null && NamePattern().IsMatch(name);

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
            diagnostics.Add(new Diagnostic(e.Path ?? "$", $"invalid JSON: {e.Message}"));
            return null;
        }
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
                foreach (var waiting in Reachable(document.OnCancel, compiled).Where(st => st.Kind is StepKind.WaitForSignal or StepKind.Delay or StepKind.HumanTask or StepKind.Http or StepKind.SubWorkflow))
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
            // In the order of the document: each parallel step followed by the steps of its branches.
            Steps = steps.SelectMany(st => compiled[st.Id!].ParallelBranches.SelectMany(b => b.Steps).Prepend(compiled[st.Id!]))
                .ToDictionary(st => st.Id, StringComparer.Ordinal),
            StepOrder = steps.Select(st => compiled[st.Id!]).ToList(),
            OnCancel = document.OnCancel,
            Json = string.Empty,
        };
        return definition.WithJson(DefinitionDecompiler.ToJson(definition));
    }

    /// <summary>Where a step id is declared (its JSON path) and the parallel branch it belongs to (null: the definition's own list).</summary>
    private sealed record StepDeclaration(string Path, ParallelScope? Within);

    /// <summary>Collects the ids of a list of steps and, recursively, of the branches of its parallel steps.</summary>
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
            else if (ids.TryGetValue(id!, out var first))
            {
                diagnostics.Add(new Diagnostic($"{path}[{i}].id", $"duplicate step id '{id}' (first used at {first.Path})"));
            }
            else
            {
                ids.Add(id!, new StepDeclaration($"{path}[{i}]", within));
            }

            if (step is { Type: StepKindNames.Parallel, Branches: { } branches } && IsValidName(id))
            {
                for (var b = 0; b < branches.Count; b++)
                {
                    if (branches[b] is { Steps: { } inner } branch)
                    {
                        DeclareIds(inner, $"{path}[{i}].branches[{b}].steps", new ParallelScope(id!, branch.Name ?? $"#{b}"), ids, diagnostics);
                    }
                }
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
            foreach (var next in Successors(step))
            {
                pending.Push(next);
            }
        }
    }

    public static IEnumerable<string> Successors(CompiledStep step)
    {
        if (step.Next is not null) yield return step.Next;
        if (step.OnTimeout is not null) yield return step.OnTimeout;
        foreach (var branch in step.Branches) yield return branch.Next;
        if (step.Otherwise is not null) yield return step.Otherwise;
        if (step.OnError is not null) yield return step.OnError;
        foreach (var branch in step.ParallelBranches) yield return branch.Entry;
    }

    private CompiledStep? CompileStep(StepDocument step, string path, string? following, ParallelScope? within,
        Dictionary<string, StepDeclaration> ids, Dictionary<string, CompiledStep> compiled, List<Diagnostic> diagnostics)
    {
        var before = diagnostics.Count;
        if (step.Type is null || !StepKindNames.ByName.TryGetValue(step.Type, out var kind))
        {
            diagnostics.Add(new Diagnostic($"{path}.type",
                $"type must be one of: {string.Join(", ", StepKindNames.ByName.Keys)}"));
            return null;
        }

        string? Target(string? id, string field, bool required)
        {
            if (id is null)
            {
                if (required)
                {
                    diagnostics.Add(new Diagnostic($"{path}.{field}", $"{field} is required for the step type {step.Type}"));
                }

                return null;
            }

            if (!ids.TryGetValue(id, out var declared))
            {
                diagnostics.Add(new Diagnostic($"{path}.{field}", $"no step has the id '{id}'"));
            }
            else if (declared.Within != within)
            {
                // A branch is left only through its join; the definition's own steps cannot jump into a branch.
                diagnostics.Add(new Diagnostic($"{path}.{field}", within is null
                    ? $"'{id}' is inside {declared.Within}; a step outside the branch cannot jump into it (start the branch with its parallel step)"
                    : declared.Within is null
                        ? $"'{id}' is outside {within}; a branch leaves only through its join (by running off the end of its steps)"
                        : $"'{id}' is inside {declared.Within}, not {within}; a branch leaves only through its join"));
            }

            return id;
        }

        CompiledExpression? Expr(string? source, string field, bool required)
        {
            if (source is null)
            {
                if (required)
                {
                    diagnostics.Add(new Diagnostic($"{path}.{field}", $"{field} is required for the step type {step.Type}"));
                }

                return null;
            }

            try
            {
                return expressions.Compile(source);
            }
            catch (ExpressionSyntaxException e)
            {
                diagnostics.Add(new Diagnostic($"{path}.{field}", $"invalid expression: {e.Message}"));
                return null;
            }
        }

        TimeSpan? Duration(string? text, string field, bool required)
        {
            if (text is null)
            {
                if (required)
                {
                    diagnostics.Add(new Diagnostic($"{path}.{field}", $"{field} is required for the step type {step.Type}"));
                }

                return null;
            }

            try
            {
                var value = XmlConvert.ToTimeSpan(text);
                if (value >= TimeSpan.Zero && value <= MaxDuration)
                {
                    return value;
                }
            }
            catch (Exception e) when (e is FormatException or OverflowException)
            {
            }

            diagnostics.Add(new Diagnostic($"{path}.{field}", $"'{text}' is not an ISO 8601 duration from PT0S to P36500D, such as PT30S"));
            return null;
        }

        string? Variable(string? name, string field)
        {
            if (name is not null && !VariablePattern().IsMatch(name))
            {
                diagnostics.Add(new Diagnostic($"{path}.{field}", $"'{name}' is not a valid variable name"));
            }

            return name;
        }

        void NotAllowed(object? value, string field)
        {
            if (value is not null)
            {
                diagnostics.Add(new Diagnostic($"{path}.{field}", $"{field} does not apply to the step type {step.Type}"));
            }
        }

        // Continuing steps fall through to the following one; the last step of the definition's list must say where to
        // go, while the last step of a parallel branch without 'next' ends the branch (it joins).
        var continues = kind is StepKind.Assign or StepKind.WaitForSignal or StepKind.Delay or StepKind.HumanTask or StepKind.Http
            or StepKind.SubWorkflow or StepKind.Parallel;
        string? next = null;
        if (continues)
        {
            next = step.Next is not null ? Target(step.Next, "next", required: true) : following;
            if (next is null && within is null)
            {
                diagnostics.Add(new Diagnostic($"{path}.next",
                    $"a {step.Type} step at the end of the list needs 'next' (or end the list with complete or fail)"));
            }
        }
        else
        {
            NotAllowed(step.Next, "next");
        }

        var assignments = new List<KeyValuePair<string, CompiledExpression>>();
        var branches = new List<CompiledBranch>();
        var parallelBranches = new List<CompiledParallelBranch>();
        TimeSpan? timeout = null, duration = null;
        string? onTimeout = null, otherwise = null;
        CompiledExpression? assignee = null, data = null, result = null, reason = null, url = null, body = null, input = null;
        var headers = new List<KeyValuePair<string, CompiledExpression>>();

        switch (kind)
        {
            case StepKind.Assign:
                if (step.Set is not { Count: > 0 })
                {
                    diagnostics.Add(new Diagnostic($"{path}.set", "set must name at least one variable"));
                }
                else
                {
                    foreach (var (name, source) in step.Set)
                    {
                        Variable(name, $"set.{name}");
                        var e = Expr(source, $"set.{name}", required: true);
                        if (e is not null)
                        {
                            assignments.Add(new(name, e));
                        }
                    }
                }

                break;
            case StepKind.WaitForSignal:
                if (step.Signal is null || !IsValidName(step.Signal))
                {
                    diagnostics.Add(new Diagnostic($"{path}.signal",
                        "signal is required: the name of the awaited signal (letters, digits, '.', '_' or '-')"));
                }

                timeout = Duration(step.Timeout, "timeout", required: false);
                onTimeout = Target(step.OnTimeout, "onTimeout", required: step.Timeout is not null);
                if (step.Timeout is null && step.OnTimeout is not null)
                {
                    diagnostics.Add(new Diagnostic($"{path}.onTimeout", "onTimeout needs a timeout"));
                }

                Variable(step.Output, "output");
                break;
            case StepKind.Delay:
                duration = Duration(step.Duration, "duration", required: true);
                break;
            case StepKind.Decision:
                if (step.Branches is not { Count: > 0 })
                {
                    diagnostics.Add(new Diagnostic($"{path}.branches", "a decision needs at least one branch"));
                }
                else
                {
                    for (var b = 0; b < step.Branches.Count; b++)
                    {
                        var branch = step.Branches[b];
                        var bp = $"branches[{b}]";
                        var when = Expr(branch?.When, $"{bp}.when", required: true);
                        var target = Target(branch?.Next, $"{bp}.next", required: true);
                        NotAllowed(branch?.Name, $"{bp}.name");
                        NotAllowed(branch?.Steps, $"{bp}.steps");
                        if (when is not null && target is not null)
                        {
                            branches.Add(new CompiledBranch(when, target));
                        }
                    }
                }

                otherwise = Target(step.Otherwise, "otherwise", required: false);
                break;
            case StepKind.HumanTask:
                if (string.IsNullOrWhiteSpace(step.Title))
                {
                    diagnostics.Add(new Diagnostic($"{path}.title", "title is required for a humanTask step"));
                }

                assignee = Expr(step.Assignee, "assignee", required: false);
                data = Expr(step.Data, "data", required: false);
                Variable(step.Output, "output");
                break;
            case StepKind.Complete:
                if (within is not null)
                {
                    diagnostics.Add(new Diagnostic($"{path}.type",
                        $"a complete step cannot be inside {within}: a branch ends by running off the end of its steps (it joins); complete after the parallel step"));
                }

                result = Expr(step.Result, "result", required: false);
                break;
            case StepKind.Parallel:
                CompileParallel(step, path, within, ids, compiled, diagnostics, parallelBranches);
                break;
            case StepKind.Fail:
                reason = Expr(step.Reason, "reason", required: true);
                break;
            case StepKind.SubWorkflow:
                if (!IsValidName(step.Definition))
                {
                    diagnostics.Add(new Diagnostic($"{path}.definition", "definition is required: the name of the child definition"));
                }

                if (step.Version is <= 0)
                {
                    diagnostics.Add(new Diagnostic($"{path}.version", "version must be a positive version number"));
                }

                input = Expr(step.Input, "input", required: false);
                Variable(step.Output, "output");
                break;
            case StepKind.Http:
                if (step.Method is null || !HttpMethods.Contains(step.Method))
                {
                    diagnostics.Add(new Diagnostic($"{path}.method", $"method is required: one of {string.Join(", ", HttpMethods)}"));
                }

                url = Expr(step.Url, "url", required: true);
                body = Expr(step.Body, "body", required: false);
                foreach (var (header, source) in step.Headers ?? [])
                {
                    var e = Expr(source, $"headers.{header}", required: true);
                    if (e is not null)
                    {
                        headers.Add(new(header, e));
                    }
                }

                timeout = Duration(step.Timeout, "timeout", required: false);
                if (timeout > MaxCallOutTimeout)
                {
                    diagnostics.Add(new Diagnostic($"{path}.timeout", "an http step's timeout is at most PT5M"));
                }

                if (step.Retries is < 0 or > 10)
                {
                    diagnostics.Add(new Diagnostic($"{path}.retries", "retries must be between 0 and 10"));
                }

                Variable(step.Output, "output");
                break;
        }

        if (kind != StepKind.Assign) NotAllowed(step.Set, "set");
        if (kind != StepKind.WaitForSignal)
        {
            NotAllowed(step.Signal, "signal");
            NotAllowed(step.OnTimeout, "onTimeout");
        }

        if (kind is not (StepKind.WaitForSignal or StepKind.Http)) NotAllowed(step.Timeout, "timeout");
        if (kind != StepKind.Http)
        {
            NotAllowed(step.Method, "method");
            NotAllowed(step.Url, "url");
            NotAllowed(step.Body, "body");
            NotAllowed(step.Headers, "headers");
            NotAllowed(step.Retries, "retries");
        }

        if (kind is not (StepKind.WaitForSignal or StepKind.HumanTask or StepKind.Http or StepKind.SubWorkflow)) NotAllowed(step.Output, "output");
        if (kind != StepKind.SubWorkflow)
        {
            NotAllowed(step.Definition, "definition");
            NotAllowed(step.Version, "version");
            NotAllowed(step.Input, "input");
        }
        if (kind != StepKind.Delay) NotAllowed(step.Duration, "duration");
        if (kind is not (StepKind.Decision or StepKind.Parallel)) NotAllowed(step.Branches, "branches");
        if (kind != StepKind.Decision) NotAllowed(step.Otherwise, "otherwise");

        if (kind != StepKind.HumanTask)
        {
            NotAllowed(step.Title, "title");
            NotAllowed(step.Assignee, "assignee");
            NotAllowed(step.Role, "role");
            NotAllowed(step.Data, "data");
        }

        string? onError = null;
        if (kind is StepKind.WaitForSignal or StepKind.Delay or StepKind.SubWorkflow or StepKind.Parallel)
        {
            NotAllowed(step.OnError, "onError");
            NotAllowed(step.ErrorOutput, "errorOutput");
        }
        else
        {
            onError = Target(step.OnError, "onError", required: false);
            Variable(step.ErrorOutput, "errorOutput");
            if (step.ErrorOutput is not null && step.OnError is null)
            {
                diagnostics.Add(new Diagnostic($"{path}.errorOutput", "errorOutput needs onError"));
            }
        }

        if (kind != StepKind.Complete) NotAllowed(step.Result, "result");
        if (kind != StepKind.Fail) NotAllowed(step.Reason, "reason");

        if (diagnostics.Count > before)
        {
            return null;
        }

        return new CompiledStep
        {
            Id = step.Id!,
            Kind = kind,
            Description = step.Description,
            Next = next,
            Within = within,
            Assignments = assignments,
            Signal = step.Signal,
            Timeout = timeout,
            OnTimeout = onTimeout,
            Output = step.Output,
            Duration = duration,
            Branches = branches,
            Otherwise = otherwise,
            ParallelBranches = parallelBranches,
            Title = step.Title,
            Assignee = assignee,
            Role = step.Role,
            Data = data,
            Result = result,
            Reason = reason,
            OnError = onError,
            ErrorOutput = step.ErrorOutput,
            Method = step.Method,
            Url = url,
            Body = body,
            Headers = headers,
            Retries = step.Retries,
            Definition = step.Definition,
            DefinitionVersion = step.Version,
            Input = input,
        };
    }

    /// <summary>
    /// A parallel step's branches: each has a unique name and at least one step, and its steps are compiled in the
    /// branch's scope (their transitions stay inside the branch). Parallel steps do not nest.
    /// </summary>
    private void CompileParallel(StepDocument step, string path, ParallelScope? within,
        Dictionary<string, StepDeclaration> ids, Dictionary<string, CompiledStep> compiled, List<Diagnostic> diagnostics,
        List<CompiledParallelBranch> result)
    {
        if (!IsValidName(step.Id))
        {
            return;
        }

        if (within is not null)
        {
            diagnostics.Add(new Diagnostic($"{path}.type",
                $"a parallel step cannot be inside {within}: parallel steps do not nest (run the inner branches as branches of the outer step)"));
            return;
        }

        if (step.Branches is not { Count: > 0 })
        {
            diagnostics.Add(new Diagnostic($"{path}.branches", "a parallel step needs at least one branch"));
            return;
        }

        var names = new Dictionary<string, int>(StringComparer.Ordinal);
        for (var b = 0; b < step.Branches.Count; b++)
        {
            var branch = step.Branches[b];
            var bp = $"{path}.branches[{b}]";
            if (branch is null)
            {
                diagnostics.Add(new Diagnostic(bp, "a branch must be an object"));
                continue;
            }

            if (!IsValidName(branch.Name))
            {
                diagnostics.Add(new Diagnostic($"{bp}.name", "name is required: letters, digits, '.', '_' or '-', starting with a letter or digit"));
            }
            else if (!names.TryAdd(branch.Name!, b))
            {
                diagnostics.Add(new Diagnostic($"{bp}.name", $"duplicate branch name '{branch.Name}' (first used at {path}.branches[{names[branch.Name!]}])"));
            }

            if (branch.When is not null)
            {
                diagnostics.Add(new Diagnostic($"{bp}.when", "when does not apply to a parallel branch (every branch runs)"));
            }

            if (branch.Next is not null)
            {
                diagnostics.Add(new Diagnostic($"{bp}.next", "next does not apply to a parallel branch (the branch starts at its first step; the parallel step's next follows the join)"));
            }

            if (branch.Steps is not { Count: > 0 })
            {
                diagnostics.Add(new Diagnostic($"{bp}.steps", "a parallel branch needs at least one step"));
                continue;
            }

            var steps = CompileList(branch.Steps, $"{bp}.steps", new ParallelScope(step.Id!, branch.Name ?? $"#{b}"), ids, compiled, diagnostics);
            if (steps.Count == branch.Steps.Count && branch.Name is not null)
            {
                result.Add(new CompiledParallelBranch(branch.Name, steps));
            }
        }
    }
}
