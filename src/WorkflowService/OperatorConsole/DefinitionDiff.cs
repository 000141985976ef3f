using DiffPlex.DiffBuilder;
using DiffPlex.DiffBuilder.Model;

namespace WorkflowService.OperatorConsole;

/// <summary>One line of a difference: unchanged, added, removed, or a gap standing for unchanged lines left out.</summary>
public sealed record DiffRow(DiffRowKind Kind, int? Before, int? After, string Text);

public enum DiffRowKind { Same, Added, Removed, Gap }

/// <summary>
/// The difference between two versions' JSON as a unified diff: each change with <see cref="Context"/> unchanged lines
/// around it, the rest folded into gaps (DiffPlex finds the changed lines).
/// </summary>
public static class DefinitionDiff
{
    public const int Context = 3;

    public static IReadOnlyList<DiffRow> Of(string before, string after)
    {
        var lines = new List<DiffRow>();
        var (b, a) = (0, 0);
        foreach (var line in InlineDiffBuilder.Diff(before, after, ignoreWhiteSpace: false).Lines)
        {
            switch (line.Type)
            {
                case ChangeType.Deleted:
                    lines.Add(new DiffRow(DiffRowKind.Removed, ++b, null, line.Text));
                    break;
                case ChangeType.Inserted:
                    lines.Add(new DiffRow(DiffRowKind.Added, null, ++a, line.Text));
                    break;
                default:
                    lines.Add(new DiffRow(DiffRowKind.Same, ++b, ++a, line.Text));
                    break;
            }
        }

        var keep = new bool[lines.Count];
        for (var i = 0; i < lines.Count; i++)
        {
            if (lines[i].Kind != DiffRowKind.Same)
            {
                for (var j = Math.Max(0, i - Context); j <= Math.Min(lines.Count - 1, i + Context); j++)
                {
                    keep[j] = true;
                }
            }
        }

        var rows = new List<DiffRow>();
        for (var i = 0; i < lines.Count;)
        {
            if (keep[i])
            {
                rows.Add(lines[i++]);
                continue;
            }

            var start = i;
            while (i < lines.Count && !keep[i])
            {
                i++;
            }

            rows.Add(new DiffRow(DiffRowKind.Gap, null, null, $"{i - start} unchanged line{(i - start == 1 ? "" : "s")}"));
        }

        return rows.Any(r => r.Kind is DiffRowKind.Added or DiffRowKind.Removed) ? rows : [];
    }
}
