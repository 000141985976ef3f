using Serilog.Events;
using Serilog.Formatting;
using Serilog.Formatting.Display;

namespace WorkflowService.Hosting;

/// <summary>
/// The default console format, named in appsettings.json (Serilog:WriteTo:0:Args:formatter) so that one setting replaces
/// it with a JSON formatter: time, level, source, message and the event's properties as JSON, on one line.
/// </summary>
public sealed class ConsoleTextFormatter : ITextFormatter
{
    public const string OutputTemplate = "[{Timestamp:HH:mm:ss} {Level:u3}] {SourceContext}: {Message:l} {Properties:j}{NewLine}{Exception}";

    private readonly MessageTemplateTextFormatter _formatter = new(OutputTemplate, System.Globalization.CultureInfo.InvariantCulture);

    public void Format(LogEvent logEvent, TextWriter output) => _formatter.Format(logEvent, output);
}
