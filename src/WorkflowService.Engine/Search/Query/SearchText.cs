using System.Diagnostics.CodeAnalysis;
using System.Text;

namespace WorkflowService.Engine.Search.Query;

/// <summary>
/// The words of a text attribute, as a store indexes them and a filter matches them: maximal runs of Unicode letters
/// and digits, lower-cased (invariant), each once, in first-seen order. <c>notes = "broken screen"</c> holds when
/// the words include "broken" and "screen"; <c>notes startsWith "scr"</c> when a word starts with "scr". A store keeps
/// one indexed row (or array element) per word, so both are index lookups on PostgreSQL, SQLite and MongoDB.
/// </summary>
public static class SearchText
{
    [SuppressMessage("Globalization", "CA1308:Normalize strings to uppercase",
        Justification = "The words are index keys that clients see in docs and plans; lower case is the form they are written in.")]
    public static IReadOnlyList<string> Words(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        var words = new List<string>();
        var word = new StringBuilder();
        foreach (var rune in text.EnumerateRunes())
        {
            if (Rune.IsLetterOrDigit(rune))
            {
                word.Append(rune.ToString());
                continue;
            }

            Add(word, words);
        }

        Add(word, words);
        return words;

        static void Add(StringBuilder word, List<string> words)
        {
            if (word.Length == 0)
            {
                return;
            }

            var lower = word.ToString().ToLowerInvariant();
            if (!words.Contains(lower))
            {
                words.Add(lower);
            }

            word.Clear();
        }
    }

    /// <summary>True when <paramref name="text"/> is one word and nothing else (a valid text prefix).</summary>
    public static bool IsOneWord(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        return text.Length > 0 && text.EnumerateRunes().All(Rune.IsLetterOrDigit);
    }
}
