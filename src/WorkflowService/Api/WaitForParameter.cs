using System.Diagnostics.CodeAnalysis;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Api;

/// <summary>
/// The waitFor query parameter of a long-poll: instance statuses by name, in any case, separated by commas
/// (waitFor=Completed,Failed), the parameter repeated, or both. A number is refused, though the enum would take it.
/// </summary>
internal static class WaitForParameter
{
    public const string Name = "waitFor";

    private static readonly string Expected = string.Join(", ", Enum.GetNames<InstanceStatus>());

    /// <summary>The statuses <paramref name="values"/> name; else the client's error, which names the parameter and the statuses it takes.</summary>
    public static bool TryParse(IEnumerable<string> values, [NotNullWhen(true)] out IReadOnlySet<InstanceStatus>? statuses, [NotNullWhen(false)] out string? error)
    {
        var parsed = new HashSet<InstanceStatus>();
        foreach (var part in values.SelectMany(v => v.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)))
        {
            if (!Enum.TryParse<InstanceStatus>(part, ignoreCase: true, out var status) || int.TryParse(part, out _))
            {
                (statuses, error) = (null, $"{Name}: '{part}' is not one of {Expected}");
                return false;
            }

            parsed.Add(status);
        }

        if (parsed.Count == 0)
        {
            (statuses, error) = (null, $"{Name}: expected one or more of {Expected}, separated by commas; got none");
            return false;
        }

        (statuses, error) = (parsed, null);
        return true;
    }
}
