using System.Diagnostics.CodeAnalysis;
using System.Xml;
using WorkflowService.Engine.Expressions;

namespace WorkflowService.Engine.Definitions;

/// <summary>The fields of a <see cref="StepDocument"/> that only some step types accept.</summary>
[Flags]
internal enum StepField
{
    None = 0,
    Next = 1 << 0,
    Set = 1 << 1,
    Signal = 1 << 2,
    OnTimeout = 1 << 3,
    Timeout = 1 << 4,
    Method = 1 << 5,
    Url = 1 << 6,
    Body = 1 << 7,
    Headers = 1 << 8,
    Retries = 1 << 9,
    Output = 1 << 10,
    Definition = 1 << 11,
    Version = 1 << 12,
    Input = 1 << 13,
    Duration = 1 << 14,
    Branches = 1 << 15,
    Otherwise = 1 << 16,
    Title = 1 << 17,
    Assignee = 1 << 18,
    Role = 1 << 19,
    Data = 1 << 20,
    /// <summary>onError and errorOutput, which go together.</summary>
    OnError = 1 << 21,
    Result = 1 << 22,
    Reason = 1 << 23,
    Event = 1 << 24,
    Items = 1 << 25,
    Steps = 1 << 26,
    Mode = 1 << 27,
    MaxConcurrency = 1 << 28,
    Completion = 1 << 29,
    ToleratedFailures = 1 << 30,
}

/// <summary>How the compiler handles one step type: the fields it accepts and how it compiles the rest.</summary>
internal sealed record StepType(StepField Accepts, Func<StepCompilation, CompiledStep?> Compile);

/// <summary>
/// One step being compiled: its document, where it is, what it falls through to, and the checks that step types
/// share. Each check reports what is wrong at the field's JSON path and returns null for a missing or invalid value.
/// </summary>
internal sealed class StepCompilation(
    StepDocument document,
    string path,
    ParallelScope? within,
    ExpressionRuntime expressions,
    IReadOnlyDictionary<string, DefinitionCompiler.StepDeclaration> ids,
    List<Diagnostic> diagnostics,
    Func<IReadOnlyList<StepDocument?>, string, ParallelScope, List<CompiledStep>> compileBranch)
{
    /// <summary>
    /// The fields only some types accept, in the order their misuse is reported ('next' is checked first, on its own).
    /// </summary>
    private static readonly (StepField Field, string Name, Func<StepDocument, object?> Value)[] OptionalFields =
    [
        (StepField.Set, "set", d => d.Set),
        (StepField.Signal, "signal", d => d.Signal),
        (StepField.OnTimeout, "onTimeout", d => d.OnTimeout),
        (StepField.Timeout, "timeout", d => d.Timeout),
        (StepField.Method, "method", d => d.Method),
        (StepField.Url, "url", d => d.Url),
        (StepField.Body, "body", d => d.Body),
        (StepField.Headers, "headers", d => d.Headers),
        (StepField.Retries, "retries", d => d.Retries),
        (StepField.Output, "output", d => d.Output),
        (StepField.Definition, "definition", d => d.Definition),
        (StepField.Version, "version", d => d.Version),
        (StepField.Input, "input", d => d.Input),
        (StepField.Duration, "duration", d => d.Duration),
        (StepField.Branches, "branches", d => d.Branches),
        (StepField.Otherwise, "otherwise", d => d.Otherwise),
        (StepField.Title, "title", d => d.Title),
        (StepField.Assignee, "assignee", d => d.Assignee),
        (StepField.Role, "role", d => d.Role),
        (StepField.Data, "data", d => d.Data),
        (StepField.OnError, "onError", d => d.OnError),
        (StepField.OnError, "errorOutput", d => d.ErrorOutput),
        (StepField.Result, "result", d => d.Result),
        (StepField.Reason, "reason", d => d.Reason),
        (StepField.Event, "event", d => d.Event),
        (StepField.Items, "items", d => d.Items),
        (StepField.Steps, "steps", d => d.Steps),
        (StepField.Mode, "mode", d => d.Mode),
        (StepField.MaxConcurrency, "maxConcurrency", d => d.MaxConcurrency),
        (StepField.Completion, "completion", d => d.Completion),
        (StepField.ToleratedFailures, "toleratedFailures", d => d.ToleratedFailures),
    ];

    /// <summary>The fields a step of <paramref name="type"/> takes, as a document writes them.</summary>
    public static IEnumerable<string> Fields(StepType type) =>
        ((string[])["id", "type", "description"])
        .Concat(type.Accepts.HasFlag(StepField.Next) ? ["next"] : [])
        .Concat(OptionalFields.Where(f => type.Accepts.HasFlag(f.Field)).Select(f => f.Name));

    public StepDocument Document { get; } = document;
    public string Path { get; } = path;
    public ParallelScope? Within { get; } = within;

    /// <summary>A step without a valid id was reported when the ids were declared; the compiler drops it.</summary>
    public string Id { get; } = document.Id ?? string.Empty;

    /// <summary>Where a continuing step goes next: its 'next', else the following step; null when it joins or is invalid.</summary>
    public string? Next { get; private set; }

    /// <summary>The step's error path as written; it is checked with the fields every type shares.</summary>
    public ErrorPath? ErrorPath => Document.OnError is { } next ? new ErrorPath(next, Document.ErrorOutput) : null;

    /// <summary>Checks 'next' before the type's own fields, and what the type does not accept after them.</summary>
    public CompiledStep? Compile(StepType type, string? following)
    {
        var before = diagnostics.Count;
        if (type.Accepts.HasFlag(StepField.Next))
        {
            // Continuing steps fall through to the following one; the last step of the definition's list must say where
            // to go, while the last step of a parallel branch without 'next' ends the branch (it joins).
            Next = Document.Next is not null ? Target(Document.Next, "next", required: true) : following;
            if (Next is null && Within is null)
            {
                Error("next", $"a {Document.Type} step at the end of the list needs 'next' (or end the list with complete or fail)");
            }
        }
        else
        {
            NotAllowed(Document.Next, "next");
        }

        var step = type.Compile(this);
        foreach (var (field, name, value) in OptionalFields)
        {
            if (!type.Accepts.HasFlag(field))
            {
                NotAllowed(value(Document), name);
            }
            else if (name == "onError")
            {
                // Checked here, between the fields before and after it, so that diagnostics keep their order.
                Target(Document.OnError, "onError", required: false);
                Variable(Document.ErrorOutput, "errorOutput");
                if (Document.ErrorOutput is not null && Document.OnError is null)
                {
                    Error("errorOutput", "errorOutput needs onError");
                }
            }
        }

        return diagnostics.Count > before ? null : step;
    }

    public void Error(string field, string message) => diagnostics.Add(new Diagnostic($"{Path}.{field}", message));

    public void NotAllowed(object? value, string field)
    {
        if (value is not null)
        {
            Error(field, $"{field} does not apply to the step type {Document.Type}");
        }
    }

    /// <summary>True when a required value is present; else reports it missing.</summary>
    private bool Present([NotNullWhen(true)] object? value, string field, bool required)
    {
        if (value is null && required)
        {
            Error(field, $"{field} is required for the step type {Document.Type}");
        }

        return value is not null;
    }

    /// <summary>A transition target: it must exist and stay in this step's list (a branch is left only through its join).</summary>
    public string? Target(string? id, string field, bool required)
    {
        if (!Present(id, field, required))
        {
            return null;
        }

        if (!ids.TryGetValue(id, out var declared))
        {
            Error(field, $"no step has the id '{id}'");
        }
        else if (declared.Within != Within)
        {
            Error(field, Within is null
                ? $"'{id}' is inside {declared.Within}; a step outside the branch cannot jump into it (start the branch with its parallel step)"
                : declared.Within is null
                    ? $"'{id}' is outside {Within}; a branch leaves only through its join (by running off the end of its steps)"
                    : $"'{id}' is inside {declared.Within}, not {Within}; a branch leaves only through its join");
        }

        return id;
    }

    /// <param name="secrets">Whether the field may call <c>secret('name')</c> (an http step's url, headers and body).</param>
    public CompiledExpression? Expr(string? source, string field, bool required, bool secrets = false)
    {
        if (!Present(source, field, required))
        {
            return null;
        }

        try
        {
            var compiled = expressions.Compile(source);
            if (!secrets && compiled.Secrets.Count > 0)
            {
                Error(field, "secret() can be used only in an http step's url, headers and body");
                return null;
            }

            return compiled;
        }
        catch (ExpressionSyntaxException e)
        {
            Error(field, $"invalid expression: {e.Message}");
            return null;
        }
    }

    public TimeSpan? Duration(string? text, string field, bool required)
    {
        if (!Present(text, field, required))
        {
            return null;
        }

        try
        {
            var value = XmlConvert.ToTimeSpan(text);
            if (value >= TimeSpan.Zero && value <= DefinitionCompiler.MaxDuration)
            {
                return value;
            }
        }
        catch (Exception e) when (e is FormatException or OverflowException)
        {
        }

        Error(field, $"'{text}' is not an ISO 8601 duration from PT0S to P36500D, such as PT30S");
        return null;
    }

    public void Variable(string? name, string field)
    {
        if (name is not null && DefinitionCompiler.AssignedVariableProblem(name) is { } problem)
        {
            Error(field, problem);
        }
    }

    /// <summary>Compiles the steps of a parallel branch in the branch's scope.</summary>
    public List<CompiledStep> CompileBranch(IReadOnlyList<StepDocument?> steps, string path, ParallelScope scope) =>
        compileBranch(steps, path, scope);
}
