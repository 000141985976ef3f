using Microsoft.Extensions.Options;

namespace WorkflowService.Hosting;

/// <summary>Wrong settings found at start-up, told to the operator as one line: each message names its key.</summary>
public static class StartupFailure
{
    /// <summary>The settings' messages; null when <paramref name="exception"/> is not about settings.</summary>
    public static string? Describe(Exception exception) => exception switch
    {
        OptionsValidationException e => string.Join(" ", e.Failures),
        AggregateException e when e.InnerExceptions.All(i => i is OptionsValidationException) =>
            string.Join(" ", e.InnerExceptions.SelectMany(i => ((OptionsValidationException)i).Failures)),
        _ => null,
    };
}
