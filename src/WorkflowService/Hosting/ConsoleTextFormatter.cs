using Serilog.Events;
using Serilog.Formatting;
using Serilog.Formatting.Display;

namespace WorkflowService.Hosting;

/// <summary>
/// The default console format, named in appsettings.json (Serilog:WriteTo:0:Args:formatter) so that one setting replaces
/// it with a JSON formatter: time, level, source, message and the event's properties as JSON, on one line; inside a traced
/// operation (a request, an engine run) also the W3C trace and span ids, as the JSON formatters write them (@tr, @sp).
/// </summary>
public sealed class ConsoleTextFormatter : ITextFormatter
{
    public const string OutputTemplate = "[{Timestamp:HH:mm:ss} {Level:u3}] {SourceContext}: {Message:l} {Properties:j}{NewLine}{Exception}";

    /// <summary>The same, for an event written inside a traced operation: its W3C trace and span ids, to find it by in a trace.</summary>
    public const string TracedOutputTemplate =
        "[{Timestamp:HH:mm:ss} {Level:u3}] {SourceContext}: {Message:l} {Properties:j} trace={TraceId} span={SpanId}{NewLine}{Exception}";

    private readonly MessageTemplateTextFormatter _formatter = new(OutputTemplate, System.Globalization.CultureInfo.InvariantCulture);
    private readonly MessageTemplateTextFormatter _traced = new(TracedOutputTemplate, System.Globalization.CultureInfo.InvariantCulture);

    public void Format(LogEvent logEvent, TextWriter output) => (logEvent.TraceId is null ? _formatter : _traced).Format(logEvent, output);
}
