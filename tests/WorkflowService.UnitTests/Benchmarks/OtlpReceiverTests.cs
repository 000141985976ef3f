using WorkflowService.Testing;

namespace WorkflowService.UnitTests.Benchmarks;

/// <summary>
/// The benchmark's OTLP receiver reads the span count of a trace export from its protobuf wire format: spans nested in
/// scope spans nested in resource spans, other fields (resources, scopes, attributes of every wire type) skipped, and a
/// message that is not well-formed refused rather than miscounted.
/// </summary>
public sealed class OtlpReceiverTests
{
    [Fact]
    public void Spans_are_counted_across_resources_and_scopes()
    {
        var span = Message(Bytes(1, [1, 2, 3]), Varint(7, 300), Fixed64(11), Fixed32(13));
        var scopeA = Message(Bytes(1, [9]), Bytes(2, span), Bytes(2, span));
        var scopeB = Message(Bytes(2, span));
        var resourceA = Message(Bytes(1, [4, 5]), Bytes(2, scopeA), Bytes(2, scopeB), Bytes(3, [0x41]));
        var resourceB = Message(Bytes(2, Message(Bytes(2, span))));
        var request = Message(Bytes(1, resourceA), Bytes(1, resourceB));

        Assert.Equal(4, OtlpReceiver.CountSpans(request));
        Assert.Equal(0, OtlpReceiver.CountSpans([]));
    }

    [Fact]
    public void A_message_that_is_not_protobuf_is_refused()
    {
        var request = Message(Bytes(1, Message(Bytes(2, Message(Bytes(2, [1]))))));

        Assert.Null(OtlpReceiver.CountSpans(request.AsSpan(0, request.Length - 1)));
        Assert.Null(OtlpReceiver.CountSpans("{\"resourceSpans\":[]}"u8));
    }

    private static byte[] Message(params byte[][] fields) => [.. fields.SelectMany(f => f)];

    private static byte[] Bytes(int field, byte[] value) => [.. Key(field, 2), .. Encode((ulong)value.Length), .. value];

    private static byte[] Varint(int field, ulong value) => [.. Key(field, 0), .. Encode(value)];

    private static byte[] Fixed64(int field) => [.. Key(field, 1), 1, 2, 3, 4, 5, 6, 7, 8];

    private static byte[] Fixed32(int field) => [.. Key(field, 5), 1, 2, 3, 4];

    private static byte[] Key(int field, int wireType) => Encode((ulong)((field << 3) | wireType));

    private static byte[] Encode(ulong value)
    {
        var bytes = new List<byte>();
        do
        {
            var b = (byte)(value & 0x7F);
            value >>= 7;
            bytes.Add(value == 0 ? b : (byte)(b | 0x80));
        }
        while (value != 0);
        return [.. bytes];
    }
}
