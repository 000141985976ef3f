using System.Buffers;
using System.Text;
using System.Text.Json;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// How history events sit in wf_history since schema 7: one row per commit (per instance) instead of one per event, so a
/// wait point writes one history row. The row's own columns hold the commit's first event exactly as a single-event row
/// does, so a release that does not know more_json still reads a valid event from it. more_json is null for a single
/// event, else a JSON array of the events after it, in order: <c>{"at":…,"type":…,"step":…,"data":…,"actor":…}</c>, with
/// "step", "data" and "actor" left out when null and "data" the event's own JSON embedded as it is. Their sequences are
/// implied: the row's sequence plus 1, plus 2, …. Rows of both layouts mix in one instance's history.
/// </summary>
internal static class HistoryRows
{
    /// <summary>The EF Core shadow property of the more_json column on <see cref="HistoryEvent"/>.</summary>
    public const string MoreJsonProperty = "MoreJson";

    /// <summary>One wf_history row: its first event (the row's columns) and the JSON of the events after it, if any.</summary>
    public readonly record struct Row(HistoryEvent First, string? MoreJson);

    private static readonly JsonEncodedText AtName = JsonEncodedText.Encode("at");
    private static readonly JsonEncodedText TypeName = JsonEncodedText.Encode("type");
    private static readonly JsonEncodedText StepName = JsonEncodedText.Encode("step");
    private static readonly JsonEncodedText DataName = JsonEncodedText.Encode("data");
    private static readonly JsonEncodedText ActorName = JsonEncodedText.Encode("actor");

    // The writer's buffer, reused on each thread: the hot path allocates only the string it binds. A buffer grown by an
    // unusually large commit is not kept.
    private const int KeptBufferBytes = 64 * 1024;

    [ThreadStatic]
    private static ArrayBufferWriter<byte>? t_buffer;

    [ThreadStatic]
    private static Utf8JsonWriter? t_writer;

    /// <summary>
    /// The rows of <paramref name="events"/>, in order: one per run of events of one instance with consecutive sequences
    /// (a commit's events are one such run: its instance's, numbered on from its history length).
    /// </summary>
    public static List<Row> Of(IReadOnlyList<HistoryEvent> events)
    {
        var rows = new List<Row>(1);
        var start = 0;
        for (var i = 1; i <= events.Count; i++)
        {
            // The following events' sequences are implied by the first's: a gap, or another instance, starts a new row.
            if (i == events.Count || events[i].InstanceId != events[start].InstanceId || events[i].Sequence != events[i - 1].Sequence + 1)
            {
                rows.Add(new Row(events[start], i - start == 1 ? null : MoreJson(events, start + 1, i)));
                start = i;
            }
        }

        return rows;
    }

    /// <summary>The JSON array of <paramref name="events"/> from <paramref name="from"/> up to (not including) <paramref name="to"/>.</summary>
    private static string MoreJson(IReadOnlyList<HistoryEvent> events, int from, int to)
    {
        var buffer = t_buffer ??= new ArrayBufferWriter<byte>(1024);
        buffer.ResetWrittenCount();
        var json = t_writer ??= new Utf8JsonWriter(buffer);
        json.Reset(buffer);
        json.WriteStartArray();
        for (var i = from; i < to; i++)
        {
            var e = events[i];
            json.WriteStartObject();
            json.WriteString(AtName, AsUtc(e.At));
            json.WriteString(TypeName, e.Type);
            if (e.StepId is { } step)
            {
                json.WriteString(StepName, step);
            }

            if (e.DataJson is { } data)
            {
                // Embedded as JSON, not as a string holding JSON; validated, so a bad value fails this commit, not a read.
                json.WritePropertyName(DataName);
                json.WriteRawValue(data);
            }

            if (e.Actor is { } actor)
            {
                json.WriteString(ActorName, actor);
            }

            json.WriteEndObject();
        }

        json.WriteEndArray();
        json.Flush();
        var text = Encoding.UTF8.GetString(buffer.WrittenSpan);
        if (buffer.Capacity > KeptBufferBytes)
        {
            t_buffer = null;
            t_writer = null;
        }

        return text;
    }

    /// <summary>
    /// Appends the events of one row to <paramref name="into"/>: <paramref name="first"/>, then those in
    /// <paramref name="moreJson"/>, which share its id (the row's; nothing reads an event's id).
    /// </summary>
    /// <exception cref="InvalidDataException">more_json is not what <see cref="Of"/> writes.</exception>
    public static void Expand(HistoryEvent first, string? moreJson, List<HistoryEvent> into)
    {
        into.Add(first);
        if (moreJson is null)
        {
            return;
        }

        var bytes = Encoding.UTF8.GetBytes(moreJson);
        try
        {
            Read(first, bytes, into);
        }
        // The reader's Get… on a token of another type is an InvalidOperationException; a time that is not one, a
        // FormatException.
        catch (Exception e) when (e is JsonException or InvalidOperationException or FormatException)
        {
            throw Malformed(first, e.Message, e);
        }
    }

    private static void Read(HistoryEvent first, byte[] bytes, List<HistoryEvent> into)
    {
        var reader = new Utf8JsonReader(bytes);
        if (!reader.Read() || reader.TokenType != JsonTokenType.StartArray)
        {
            throw Malformed(first, "not an array");
        }

        var sequence = first.Sequence;
        while (reader.Read() && reader.TokenType == JsonTokenType.StartObject)
        {
            DateTime? at = null;
            string? type = null, step = null, data = null, actor = null;
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                if (reader.ValueTextEquals("at"u8))
                {
                    reader.Read();
                    at = reader.GetDateTime();
                }
                else if (reader.ValueTextEquals("type"u8))
                {
                    reader.Read();
                    type = reader.GetString();
                }
                else if (reader.ValueTextEquals("step"u8))
                {
                    reader.Read();
                    step = reader.GetString();
                }
                else if (reader.ValueTextEquals("data"u8))
                {
                    reader.Read();
                    // The value's own text, from its first byte to its last (a string's quotes included).
                    var start = (int)reader.TokenStartIndex;
                    reader.Skip();
                    data = Encoding.UTF8.GetString(bytes, start, (int)reader.BytesConsumed - start);
                }
                else if (reader.ValueTextEquals("actor"u8))
                {
                    reader.Read();
                    actor = reader.GetString();
                }
                else
                {
                    // A field a newer release added: not this release's to read.
                    reader.Read();
                    reader.Skip();
                }
            }

            into.Add(new HistoryEvent
            {
                Id = first.Id,
                InstanceId = first.InstanceId,
                Sequence = ++sequence,
                At = AsUtc(at ?? throw Malformed(first, $"event {sequence} has no \"at\"")),
                Type = type ?? throw Malformed(first, $"event {sequence} has no \"type\""),
                StepId = step,
                DataJson = data,
                Actor = actor,
            });
        }

        if (reader.TokenType != JsonTokenType.EndArray)
        {
            throw Malformed(first, "an element is not an object");
        }
    }

    private static InvalidDataException Malformed(HistoryEvent first, string why, Exception? inner = null) =>
        new($"The wf_history row of instance {first.InstanceId} at sequence {first.Sequence} has a more_json the store cannot read: {why}.", inner);

    // Times are UTC throughout (the model reads every column back as UTC); an unmarked one is taken as UTC, as the columns take it.
    private static DateTime AsUtc(DateTime value) => value.Kind switch
    {
        DateTimeKind.Utc => value,
        DateTimeKind.Local => value.ToUniversalTime(),
        _ => DateTime.SpecifyKind(value, DateTimeKind.Utc),
    };
}
