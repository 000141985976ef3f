using System.Buffers;
using System.Globalization;
using System.Text;
using System.Text.Json;
using Jint.Native;
using JsEngine = Jint.Engine;

namespace WorkflowService.Engine.Expressions;

/// <summary>
/// Reads JSON text into JavaScript values of one engine, as <c>JSON.parse</c> would: objects with own data properties in
/// the text's order (a later duplicate key replaces the value, <c>__proto__</c> is an ordinary key), arrays, numbers as
/// doubles, strings, booleans and null. System.Text.Json's reader does the parsing: Jint's own parser builds tables of
/// interned keys and strings for every parser, and a run's scope makes one, so that every run paid for the tables.
/// What the reader refuses and JSON.parse may take (an unpaired surrogate, escaped or not; nesting past
/// <see cref="MaxDepth"/>; text that is not JSON) goes to Jint's own parser, which gives JSON.parse's value or error.
/// </summary>
internal static class JsonValues
{
    /// <summary>
    /// Deeper nesting goes to Jint's parser, whose JSON.parse stops at 64 levels: this reader never takes a value that
    /// JSON.parse refuses.
    /// </summary>
    public const int MaxDepth = 63;

    private const int StackBufferBytes = 1024;

    // Throws on an unpaired surrogate instead of writing U+FFFD in its place: such text takes Jint's parser.
    private static readonly UTF8Encoding StrictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    /// <summary>The value of <paramref name="json"/>, as JSON.parse gives it; JSON.parse's error when it is not JSON.</summary>
    public static JsValue Parse(JsEngine engine, string json)
    {
        try
        {
            return Read(engine, json);
        }
        catch (Exception e) when (e is JsonException or InvalidOperationException or EncoderFallbackException)
        {
            // InvalidOperationException: the reader's GetString on an escaped unpaired surrogate.
            return new Jint.Native.Json.JsonParser(engine).Parse(json);
        }
    }

    private static JsValue Read(JsEngine engine, string json)
    {
        var maxBytes = Encoding.UTF8.GetMaxByteCount(json.Length);
        byte[]? rented = null;
        var buffer = maxBytes <= StackBufferBytes ? stackalloc byte[StackBufferBytes] : (rented = ArrayPool<byte>.Shared.Rent(maxBytes));
        try
        {
            var length = StrictUtf8.GetBytes(json, buffer);
            var reader = new Utf8JsonReader(buffer[..length], new JsonReaderOptions { MaxDepth = MaxDepth });
            if (!reader.Read())
            {
                throw new JsonException("the text holds no JSON value");
            }

            var value = Read(engine, ref reader);
            if (reader.Read())
            {
                throw new JsonException($"unexpected '{reader.TokenType}' after the JSON value");
            }

            return value;
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    private static JsValue Read(JsEngine engine, ref Utf8JsonReader reader)
    {
        switch (reader.TokenType)
        {
            case JsonTokenType.StartObject:
                var value = new JsObject(engine);
                while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
                {
                    var name = reader.GetString()!;
                    reader.Read();
                    value.CreateDataProperty(name, Read(engine, ref reader));
                }

                return value;
            case JsonTokenType.StartArray:
                var items = new List<JsValue>();
                while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
                {
                    items.Add(Read(engine, ref reader));
                }

                return new JsArray(engine, [.. items]);
            case JsonTokenType.String:
                return JsString.Create(reader.GetString()!);
            case JsonTokenType.Number:
                // Beyond a double's range JSON.parse gives an infinity, as double.Parse does; the reader refuses.
                return JsNumber.Create(reader.TryGetDouble(out var number)
                    ? number
                    : double.Parse(Encoding.UTF8.GetString(reader.ValueSpan), NumberStyles.Float, CultureInfo.InvariantCulture));
            case JsonTokenType.True:
                return JsBoolean.True;
            case JsonTokenType.False:
                return JsBoolean.False;
            case JsonTokenType.Null:
                return JsValue.Null;
            default:
                throw new JsonException($"unexpected '{reader.TokenType}' in JSON");
        }
    }
}
