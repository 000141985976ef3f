using System.Globalization;

namespace WorkflowService.Engine.Persistence;

/// <summary>How signals reach one item of a forEach step, and how far the step has come.</summary>
public static class ForEachItems
{
    /// <summary>The separator of a signal sent to one item: <c>approve#3</c> reaches item 3 only.</summary>
    public const char Separator = '#';

    /// <summary>The name of <paramref name="signal"/> sent to item <paramref name="index"/>.</summary>
    public static string SignalName(string signal, int index) =>
        string.Create(CultureInfo.InvariantCulture, $"{signal}{Separator}{index}");

    /// <summary>Splits a signal name sent to one item into the awaited name and the index; false for any other name.</summary>
    public static bool TrySplit(string name, out string signal, out int index)
    {
        var at = name.LastIndexOf(Separator);
        signal = at > 0 ? name[..at] : name;
        index = -1;
        return at > 0 && at < name.Length - 1 && name[(at + 1)..].All(char.IsAsciiDigit)
            && int.TryParse(name.AsSpan(at + 1), NumberStyles.None, CultureInfo.InvariantCulture, out index);
    }

    /// <summary>What a caller may say about a signal name it sends, for the API's and the console's refusals alike.</summary>
    public const string SendableNameRule =
        "1-100 letters, digits, '.', '_' or '-', optionally ending in '#' and a forEach item's index (names starting with '$' are reserved for the engine)";

    /// <summary>
    /// Whether a caller may send a signal of this name: a definition's signal name, or one with <c>#index</c> for one item of
    /// a forEach step; at most 100 characters in all.
    /// </summary>
    public static bool IsSendable(string? name) =>
        name is { Length: <= 100 } && Definitions.DefinitionCompiler.IsValidName(TrySplit(name, out var signal, out _) ? signal : name);

    /// <summary>How far the items of a forEach step have come (null when <paramref name="items"/> are not forEach items).</summary>
    public static ForEachProgress? Progress(IReadOnlyList<BranchWait> items)
    {
        if (items.Count == 0 || items[0].Index is null)
        {
            return null;
        }

        int Count(ItemOutcome outcome) => items.Count(i => i.Outcome == outcome);
        var succeeded = Count(ItemOutcome.Succeeded);
        var failed = Count(ItemOutcome.Failed);
        return new ForEachProgress(items.Count, succeeded + failed, succeeded, failed, Count(ItemOutcome.Open), Count(ItemOutcome.Pending));
    }
}

/// <summary>How far a forEach step has come: <see cref="Done"/> of <see cref="Total"/> items ended.</summary>
public sealed record ForEachProgress(int Total, int Done, int Succeeded, int Failed, int Open, int Pending)
{
    public override string ToString() => string.Create(CultureInfo.InvariantCulture, $"{Done} of {Total} done");
}
