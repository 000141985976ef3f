using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// What this node holds about the instances it committed most recently: at most <c>capacity</c> entries, the oldest
/// added dropped first; 0 holds nothing. Shared by <see cref="RecentInstances"/> and
/// <see cref="Search.RecentSearchValues"/>.
/// </summary>
internal sealed class RecentMap<T>(int capacity) where T : class
{
    // Each entry holds the sequence number of its slot in the queue: a slot left behind by an entry since dropped (an
    // instance ended, or a guess that proved stale) evicts nothing added after it.
    private readonly ConcurrentDictionary<Guid, (T Value, long Slot)> _entries = new();
    private readonly ConcurrentQueue<(Guid Id, long Slot)> _order = new();
    private long _slots;

    /// <summary>Whether the map holds nothing ever (capacity 0).</summary>
    public bool IsOff => capacity == 0;

    public bool Contains(Guid id) => _entries.ContainsKey(id);

    /// <summary>How many entries it holds now.</summary>
    public int Count => _entries.Count;

    public bool TryGet(Guid id, [MaybeNullWhen(false)] out T value)
    {
        if (_entries.TryGetValue(id, out var entry))
        {
            value = entry.Value;
            return true;
        }

        value = null;
        return false;
    }

    public void Remove(Guid id) => _entries.TryRemove(id, out _);

    /// <summary>
    /// Holds <paramref name="value"/> for <paramref name="id"/>, unless <paramref name="keepHeld"/> says the one held
    /// (committed side by side, say) is newer. A replaced entry keeps its slot; a new one takes the newest, and the
    /// oldest beyond the capacity go.
    /// </summary>
    public void Set(Guid id, T value, Func<T, T, bool> keepHeld)
    {
        if (capacity == 0)
        {
            return;
        }

        while (true)
        {
            var slot = Interlocked.Increment(ref _slots);
            if (_entries.TryAdd(id, (value, slot)))
            {
                _order.Enqueue((id, slot));
                Trim();
                return;
            }

            if (_entries.TryGetValue(id, out var held)
                && (keepHeld(held.Value, value) || _entries.TryUpdate(id, (value, held.Slot), held)))
            {
                return;
            }

            // Removed or replaced meanwhile: try again.
        }
    }

    /// <summary>The queue bounds the dictionary: the entry of the oldest slot goes with it, if it is still that slot's.</summary>
    private void Trim()
    {
        while (_order.Count > capacity && _order.TryDequeue(out var oldest))
        {
            // The entry that still holds this slot goes, whatever value a concurrent Set gave it meanwhile (it kept the
            // slot); one removed and added again holds a newer slot and stays.
            while (_entries.TryGetValue(oldest.Id, out var held) && held.Slot == oldest.Slot
                   && !_entries.TryRemove(KeyValuePair.Create(oldest.Id, held)))
            {
            }
        }
    }
}
