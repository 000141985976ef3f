using WorkflowService.Engine.Definitions;

namespace WorkflowService.OperatorConsole;

/// <summary>What the server found wrong with a form, read per field: each problem is at its field's JSON path ($.cron).</summary>
public static class FormProblems
{
    /// <summary>The messages at <paramref name="field"/>'s path, in one line; null when it has none.</summary>
    public static string? Of(IReadOnlyList<Diagnostic> problems, string field) =>
        problems.Where(p => p.Path == $"$.{field}").Select(p => p.Message).ToList() is { Count: > 0 } messages ? string.Join("; ", messages) : null;

    /// <summary>The input's attributes that tie it to its problem (<c>aria-invalid</c>, <c>aria-describedby</c>), none when it has none.</summary>
    public static Dictionary<string, object> Attributes(IReadOnlyList<Diagnostic> problems, string field, string id) => Of(problems, field) is null
        ? []
        : new() { ["aria-invalid"] = "true", ["aria-describedby"] = $"{id}-problem" };
}
