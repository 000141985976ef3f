using Microsoft.Extensions.Options;

namespace WorkflowService.Hosting;

/// <summary>Wrong settings found at start-up, and a listen address already taken, told to the operator as one line: each message names its key.</summary>
public static class StartupFailure
{
    /// <summary>The settings' messages; null when <paramref name="exception"/> is not about settings or the listen address.</summary>
    public static string? Describe(Exception exception) => exception switch
    {
        OptionsValidationException e => string.Join(" ", e.Failures),
        // The database's schema does not fit this release: the message says which range it supports and what to do.
        Engine.Persistence.StoreSchemaException e => e.Message,
        // The store out of reach at start-up: the message says why and what to check.
        StoreStartupException e => e.Message,
        AggregateException e when e.InnerExceptions.All(i => i is OptionsValidationException) =>
            string.Join(" ", e.InnerExceptions.SelectMany(i => ((OptionsValidationException)i).Failures)),
        // Another process holds the port: the server's message names the address; the settings that choose it are the standard ones.
        IOException { InnerException: Microsoft.AspNetCore.Connections.AddressInUseException } e =>
            $"{e.Message} Stop the other process or listen elsewhere (ASPNETCORE_URLS, ASPNETCORE_HTTP_PORTS or --urls).",
        _ => null,
    };
}
