using Microsoft.Extensions.Options;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Search;

/// <summary>
/// The search attribute values of the instances this node committed most recently (at most
/// <see cref="EngineOptions.RecentInstances"/>, the oldest dropped first), as the store holds them, so that an instance's
/// view after a commit of this node reads no values back. An entry answers only for the version it was made at: a commit
/// this node did not see (another node's, a migration's) moves the instance on, and the view reads the store again.
/// </summary>
public sealed class RecentSearchValues(IOptions<EngineOptions> options)
{
    private sealed record Entry(int Version, int DefinitionVersion, IReadOnlyList<SearchAttributeValue> Values);

    private readonly Runtime.RecentMap<Entry> _entries = new(options.Value.RecentInstances);

    /// <summary>
    /// A commit this node wrote. A new instance's first run evaluates every attribute, so its values are all there are;
    /// a later commit carries those it evaluated again, over the entry of the version it was made from.
    /// </summary>
    public void Committed(WaitPointCommit commit)
    {
        ArgumentNullException.ThrowIfNull(commit);
        var instance = commit.Instance;
        if (_entries.IsOff || (instance.SearchAttributes is null && !_entries.Contains(instance.Id)))
        {
            return;
        }

        IReadOnlyList<SearchAttributeValue>? values;
        if (commit.IsNew)
        {
            values = instance.SearchAttributes is { } first ? AsStored(first, []) : null;
        }
        else
        {
            values = _entries.TryGet(instance.Id, out var held) && held.Version == commit.ExpectedVersion
                                                                 && held.DefinitionVersion == instance.DefinitionVersion
                ? AsStored(instance.SearchAttributes ?? [], held.Values)
                : null;
        }

        if (values is null)
        {
            _entries.Remove(instance.Id);
            return;
        }

        _entries.Set(instance.Id, new Entry(instance.Version, instance.DefinitionVersion, values), static (held, entry) => held.Version > entry.Version);
    }

    /// <summary>
    /// The values of <paramref name="instance"/> as committed at its version by this node, as the store would answer them
    /// (those with a value, by name); null when it holds none.
    /// </summary>
    public IReadOnlyList<SearchAttributeValue>? Find(WorkflowInstance instance)
    {
        ArgumentNullException.ThrowIfNull(instance);
        return _entries.TryGet(instance.Id, out var entry) && entry.Version == instance.Version
                                                           && entry.DefinitionVersion == instance.DefinitionVersion
            ? entry.Values
            : null;
    }

    /// <summary>
    /// <paramref name="values"/> over <paramref name="held"/> as the store answers them: the ones with a value, by name,
    /// each as every store gives it back (a number through a double); <paramref name="held"/> itself when nothing was
    /// evaluated again. Null when one would not come back the same (a time finer than a millisecond: stores keep
    /// milliseconds, some no finer).
    /// </summary>
    private static IReadOnlyList<SearchAttributeValue>? AsStored(IReadOnlyList<SearchAttributeValue> values, IReadOnlyList<SearchAttributeValue> held)
    {
        if (values.Count == 0)
        {
            return held;
        }

        var merged = new List<SearchAttributeValue>(held.Count + values.Count);
        foreach (var kept in held)
        {
            if (!Evaluated(values, kept.Name))
            {
                merged.Add(kept);
            }
        }

        foreach (var value in values)
        {
            switch (value.Value)
            {
                case null:
                    // Empty now: the store answers nothing for it.
                    break;
                case decimal number:
                    merged.Add(value with { Value = (decimal)(double)number });
                    break;
                case DateTime at when at.Ticks % TimeSpan.TicksPerMillisecond != 0 || at.Kind != DateTimeKind.Utc:
                    return null;
                case string or bool or DateTime:
                    merged.Add(value);
                    break;
                default:
                    return null;
            }
        }

        merged.Sort(static (a, b) => string.CompareOrdinal(a.Name, b.Name));
        return merged;
    }

    private static bool Evaluated(IReadOnlyList<SearchAttributeValue> values, string name)
    {
        foreach (var value in values)
        {
            if (value.Name == name)
            {
                return true;
            }
        }

        return false;
    }
}
