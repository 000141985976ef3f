using WorkflowService.OperatorConsole.Pages;

namespace WorkflowService.OperatorConsole;

/// <summary>A failure on a console page is told as a page (the API's answers are problem details; a person gets words).</summary>
public static class ConsoleErrorPage
{
    /// <summary>What a form that cannot be accepted (its antiforgery token expired or missing) is told.</summary>
    public const string ExpiredForm =
        "This form could not be accepted: it may have expired, or it was not sent from this console. Go back, reload the page and try again.";

    /// <summary>Whether the failed request was a console page or form (its long-poll, read by a script, keeps the problem answer).</summary>
    public static bool Serves(HttpContext context) =>
        context.Request.Path.StartsWithSegments(ConsolePaths.Root, StringComparison.OrdinalIgnoreCase)
        && !context.Request.Path.StartsWithSegments(ConsolePaths.Live, StringComparison.OrdinalIgnoreCase)
        && !context.Response.HasStarted;

    public static Task WriteAsync(HttpContext context, int statusCode, string title, string message) =>
        ConsolePages.Message(null, title, message, statusCode).ExecuteAsync(context);
}
