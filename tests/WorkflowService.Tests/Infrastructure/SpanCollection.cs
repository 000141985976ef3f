using System.Collections;
using System.Diagnostics;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>OpenTelemetry's in-memory exporter's collection of spans: they end on many threads at once.</summary>
public sealed class SpanCollection : ICollection<Activity>
{
    private readonly List<Activity> _items = [];
    private readonly Lock _lock = new();

    public int Count
    {
        get
        {
            lock (_lock)
            {
                return _items.Count;
            }
        }
    }

    public bool IsReadOnly => false;

    public IReadOnlyList<Activity> Snapshot()
    {
        lock (_lock)
        {
            return [.. _items];
        }
    }

    public void Add(Activity item)
    {
        lock (_lock)
        {
            _items.Add(item);
        }
    }

    public void Clear()
    {
        lock (_lock)
        {
            _items.Clear();
        }
    }

    public bool Contains(Activity item) => Snapshot().Contains(item);

    public void CopyTo(Activity[] array, int arrayIndex) => Snapshot().ToList().CopyTo(array, arrayIndex);

    public bool Remove(Activity item)
    {
        lock (_lock)
        {
            return _items.Remove(item);
        }
    }

    public IEnumerator<Activity> GetEnumerator() => Snapshot().GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
}
