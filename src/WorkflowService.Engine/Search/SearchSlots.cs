using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Engine.Search;

/// <summary>
/// The typed slots every instance has for search attribute values (as Temporal's SQL visibility preallocates Keyword01..,
/// Double01..): each store's schema creates them, with an index each, and a tenant's attribute names map to them.
/// </summary>
public static class SearchSlots
{
    /// <summary>Slots per type: the schema's columns (relational) or indexed fields (MongoDB).</summary>
    public static readonly IReadOnlyDictionary<SearchValueType, string[]> ByType = new Dictionary<SearchValueType, string[]>
    {
        [SearchValueType.Keyword] = Names("kw", 10),
        [SearchValueType.Text] = Names("txt", 3),
        [SearchValueType.Number] = Names("num", 5),
        [SearchValueType.DateTime] = Names("dt", 5),
        [SearchValueType.Bool] = Names("bool", 3),
    };

    /// <summary>Every slot, in type order.</summary>
    public static IEnumerable<(SearchValueType Type, string Slot)> All =>
        ByType.SelectMany(t => t.Value.Select(slot => (t.Key, slot)));

    /// <summary>The declared attributes among <paramref name="names"/>, in their order (a name not declared is left out).</summary>
    public static IEnumerable<DeclaredSearchAttribute> Named(IReadOnlyDictionary<string, DeclaredSearchAttribute> declared, IEnumerable<string> names) =>
        names.Select(declared.GetValueOrDefault).OfType<DeclaredSearchAttribute>();

    /// <summary>The longest keyword the schema stores (longer ones are cut to it).</summary>
    public const int MaxKeywordLength = 200;

    /// <summary>The longest text the schema stores (longer ones are cut to it): short enough for an index entry.</summary>
    public const int MaxTextLength = 1000;

    /// <summary>
    /// What declaring <paramref name="wanted"/> in a tenant that has <paramref name="declared"/> takes: the new attributes
    /// with a free slot each, or the first problem (a name declared with another type, or no free slot of a type left).
    /// </summary>
    public static (IReadOnlyList<DeclaredSearchAttribute> Added, SearchDeclarationProblem? Problem) Assign(
        IReadOnlyCollection<DeclaredSearchAttribute> declared, IEnumerable<(string Name, SearchValueType Type)> wanted)
    {
        var byName = declared.ToDictionary(d => d.Name, StringComparer.Ordinal);
        var taken = declared.Select(d => d.Slot).ToHashSet(StringComparer.Ordinal);
        var added = new List<DeclaredSearchAttribute>();
        foreach (var (name, type) in wanted)
        {
            if (byName.TryGetValue(name, out var existing))
            {
                if (existing.Type != type)
                {
                    return ([], new SearchDeclarationProblem(name,
                        $"'{name}' is already a {SearchTypeNames.Of(existing.Type)} search attribute in this tenant; an attribute has one type across definitions"));
                }

                continue;
            }

            var slot = ByType[type].FirstOrDefault(s => !taken.Contains(s));
            if (slot is null)
            {
                return ([], new SearchDeclarationProblem(name,
                    $"this tenant has no {SearchTypeNames.Of(type)} search attribute left: it may declare {ByType[type].Length}"));
            }

            var attribute = new DeclaredSearchAttribute(name, type, slot);
            taken.Add(slot);
            byName.Add(name, attribute);
            added.Add(attribute);
        }

        return (added, null);
    }

    private static string[] Names(string prefix, int count) =>
        Enumerable.Range(1, count).Select(i => string.Create(System.Globalization.CultureInfo.InvariantCulture, $"{prefix}{i:00}")).ToArray();
}

/// <summary>Why a definition's search attributes cannot be declared in its tenant: the attribute and the reason.</summary>
public sealed record SearchDeclarationProblem(string Name, string Message);
