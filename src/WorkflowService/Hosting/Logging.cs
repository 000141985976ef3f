using System.Diagnostics;
using Microsoft.AspNetCore.Diagnostics;
using Microsoft.Extensions.Options;
using Serilog;
using Serilog.Debugging;
using Serilog.Events;
using WorkflowService.Engine.Configuration;

namespace WorkflowService.Hosting;

/// <summary>
/// Logging entirely from the "Serilog" section (sinks, formatters, levels, enrichers: appsettings.json writes text to the
/// console, one setting switches it to compact JSON); one line per request; trace ids of the caller's W3C trace.
/// </summary>
internal static class Logging
{
    public const string Section = "Serilog";

    private static readonly string[] Levels = Enum.GetNames<LogEventLevel>();

    /// <summary>Serilog as the only logging provider, configured by the Serilog section; a wrong section fails the start in one line.</summary>
    public static IServiceCollection AddWorkflowLogging(this IServiceCollection services, IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        services.AddSerilog((provider, logger) =>
        {
            ThrowOnWrongLevels(configuration.GetSection(Section));
            // Serilog.Settings.Configuration throws on some mistakes (an unknown formatter type) and only reports others to
            // its self-log (an unknown sink name, which would leave the service silent): both are a wrong setting of this
            // section, told in one line with Serilog's own reason and without a stack trace.
            var reports = new List<string>();
            SelfLog.Enable(message => { lock (reports) reports.Add(message); });
            try
            {
                logger.ReadFrom.Configuration(configuration).ReadFrom.Services(provider).WriteToOtlp(configuration);
            }
            catch (Exception e) when (e is InvalidOperationException or ArgumentException or FormatException or TypeLoadException
                                          or MissingMethodException or System.Reflection.TargetInvocationException or IOException)
            {
                throw Invalid(Reason(e));
            }
            finally
            {
                SelfLog.Disable();
            }

            lock (reports)
            {
                if (reports.Count > 0)
                {
                    throw Invalid(reports[0]);
                }
            }
        });
        CachedLoggerFactory.Decorate(services);
        return services;
    }

    /// <summary>
    /// One event per request at its end: method, route template, status and duration, at Information (Error for a 5xx or
    /// an exception). Health probes and Prometheus' scrapes log at Debug (Warning when they fail), so that an orchestrator's
    /// or a collector's polling does not fill the log at the default level.
    /// </summary>
    public static WebApplication UseWorkflowRequestLogging(this WebApplication app)
    {
        var scrapePath = Telemetry.ScrapePath(app.Services.GetRequiredService<IOptions<PrometheusOptions>>().Value);
        app.UseSerilogRequestLogging(o =>
        {
            o.MessageTemplate = "HTTP {RequestMethod} {RouteTemplate} responded {StatusCode} in {Elapsed:0.0000} ms";
            o.GetLevel = (context, _, exception) => (exception, context.Response.StatusCode, Telemetry.IsProbe(context, scrapePath)) switch
            {
                (_, >= 500, true) => LogEventLevel.Warning,
                (null, _, true) => LogEventLevel.Debug,
                (not null, _, _) or (_, >= 500, _) => LogEventLevel.Error,
                _ => LogEventLevel.Information,
            };
            o.EnrichDiagnosticContext = (diagnostics, context) =>
            {
                // After an exception the handler has cleared the endpoint; its feature keeps the failed request's one.
                var endpoint = context.GetEndpoint() ?? context.Features.Get<IExceptionHandlerFeature>()?.Endpoint;
                var template = (endpoint as RouteEndpoint)?.RoutePattern.RawText;
                // A group's root route reads "/definitions/"; the request line says "/definitions", as the client wrote it.
                diagnostics.Set("RouteTemplate", template is { Length: > 1 } ? template.TrimEnd('/') : template ?? context.Request.Path.Value);
            };
        });
        return app;
    }

    /// <summary>The W3C trace id of the request (the caller's, when it sent traceparent); the connection's id without a trace.</summary>
    public static string TraceId(HttpContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        return Activity.Current is { IdFormat: ActivityIdFormat.W3C } activity ? activity.TraceId.ToHexString() : context.TraceIdentifier;
    }

    /// <summary>Levels are checked here so that the message names the key (Serilog's own names only the value).</summary>
    private static void ThrowOnWrongLevels(IConfigurationSection section)
    {
        var minimum = section.GetSection("MinimumLevel");
        var keys = new[] { minimum, minimum.GetSection("Default") }.Concat(minimum.GetSection("Override").GetChildren());
        foreach (var key in keys)
        {
            // An empty value is no setting: some sources (the test host's settings) give a parent key that value.
            if (key.Value is { } value && !string.IsNullOrWhiteSpace(value) && !Levels.Contains(value.Trim(), StringComparer.OrdinalIgnoreCase))
            {
                throw ConfigurationChoice.Invalid(key.Path, $"{key.Path} '{value}' is not a log level; allowed values: {string.Join(", ", Levels)}.");
            }
        }
    }

    private static Microsoft.Extensions.Options.OptionsValidationException Invalid(string reason) =>
        ConfigurationChoice.Invalid(Section, $"{Section}: the logging configuration cannot be applied: {FirstLine(reason)}");

    /// <summary>The first line of a report: Serilog's reasons go on with lists of candidates.</summary>
    private static string FirstLine(string text)
    {
        var line = text.Trim().Split('\n', 2)[0].Trim();
        // The self-log prefixes its time: "2026-11-23T17:35:18.1675056Z Unable to find ...".
        if (line.Split(' ', 2) is [var time, var rest] && DateTimeOffset.TryParse(time, System.Globalization.CultureInfo.InvariantCulture, out _))
        {
            line = rest;
        }

        // "Unable to find a method called X. Candidate methods are:" - the list that followed is left out, and its heading.
        var heading = line.EndsWith(':') ? line.LastIndexOf(". ", StringComparison.Ordinal) : -1;
        return heading > 0 ? line[..(heading + 1)] : line;
    }

    private static string Reason(Exception e)
    {
        while (e is System.Reflection.TargetInvocationException { InnerException: { } inner })
        {
            e = inner;
        }

        return e.Message.ReplaceLineEndings(" ");
    }
}
