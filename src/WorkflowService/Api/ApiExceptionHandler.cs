using System.Text.Json;
using Microsoft.AspNetCore.Diagnostics;
using Microsoft.AspNetCore.Mvc;

namespace WorkflowService.Api;

/// <summary>
/// Turns request-reading failures into 400/413 answers that say what was wrong, and anything else into a plain 500:
/// never a stack trace, SQL or configuration in a response.
/// </summary>
internal sealed partial class ApiExceptionHandler(IProblemDetailsService problems, ILogger<ApiExceptionHandler> logger) : IExceptionHandler
{
    public async ValueTask<bool> TryHandleAsync(HttpContext context, Exception exception, CancellationToken cancellationToken)
    {
        ProblemDetails problem;
        if (exception is BadHttpRequestException bad)
        {
            var json = bad.InnerException as JsonException;
            problem = new ProblemDetails
            {
                Status = bad.StatusCode,
                Title = bad.StatusCode == StatusCodes.Status413PayloadTooLarge ? "Request body too large" : "Bad request",
                Detail = bad.StatusCode == StatusCodes.Status413PayloadTooLarge
                    ? "The request body is larger than this service accepts (Api:MaxRequestBodyBytes)."
                    : json is not null ? $"The request body is not valid JSON for this operation: {json.Message}" : bad.Message,
            };
        }
        else
        {
            LogUnhandled(logger, exception, context.Request.Method, context.Request.Path);
            problem = new ProblemDetails
            {
                Status = StatusCodes.Status500InternalServerError,
                Title = "Internal error",
                Detail = "The service failed to handle the request; the error is logged with the trace id.",
            };
        }

        context.Response.StatusCode = problem.Status!.Value;
        return await problems.TryWriteAsync(new ProblemDetailsContext { HttpContext = context, ProblemDetails = problem, Exception = exception });
    }

    [LoggerMessage(Level = LogLevel.Error, Message = "Unhandled error in {Method} {Path}")]
    private static partial void LogUnhandled(ILogger logger, Exception exception, string method, PathString path);
}
