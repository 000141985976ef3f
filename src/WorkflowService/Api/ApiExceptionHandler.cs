using System.Text.Json;
using Microsoft.AspNetCore.Diagnostics;
using Microsoft.AspNetCore.Http.Metadata;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Extensions.Options;
using WorkflowService.OperatorConsole;

namespace WorkflowService.Api;

/// <summary>
/// Turns request-reading failures into 400/413 answers that say what was wrong, a store out of reach into 503 with
/// Retry-After, and anything else into a plain 500: never a stack trace, SQL or configuration in a response.
/// </summary>
internal sealed partial class ApiExceptionHandler(
    IProblemDetailsService problems, IOptions<Microsoft.AspNetCore.Http.Json.JsonOptions> json, IOptions<ApiOptions> api,
    WorkflowService.Engine.Persistence.IStoreFailures store, ILogger<ApiExceptionHandler> logger) : IExceptionHandler
{
    public async ValueTask<bool> TryHandleAsync(HttpContext context, Exception exception, CancellationToken cancellationToken)
    {
        ProblemDetails problem;
        if (exception is BadHttpRequestException { StatusCode: StatusCodes.Status413PayloadTooLarge })
        {
            problem = new ProblemDetails
            {
                Status = StatusCodes.Status413PayloadTooLarge,
                Title = "Request body too large",
                Detail = "The request body is larger than this service accepts (Api:MaxRequestBodyBytes).",
            };
        }
        else if (exception is BadHttpRequestException bad)
        {
            // The framework's message names .NET types and parameters; the answer speaks of what the client sent instead.
            // The endpoint and its route values are the failed request's, kept by the exception handler middleware.
            var options = json.Value.SerializerOptions;
            var failed = context.Features.Get<IExceptionHandlerFeature>();
            var endpoint = failed?.Endpoint;
            problem = bad.InnerException is JsonException invalidJson
                ? RequestProblems.ForJson(invalidJson, endpoint?.Metadata.GetMetadata<IAcceptsMetadata>()?.RequestType, options)
                : RequestProblems.ForParameters(context, endpoint, failed?.RouteValues, options)
                  ?? RequestProblems.ForMissingBody(context, endpoint, options)
                  ?? new ProblemDetails { Status = bad.StatusCode, Title = "Bad request", Detail = "The request could not be read for this operation." };
            problem.Status = bad.StatusCode;
            LogBadRequest(logger, context.Request.Method, context.Request.Path, bad.Message);
        }
        else if (store.IsUnavailable(exception))
        {
            // The database is down, paused or saturated: nothing is wrong with the request. The client is told when to try
            // again; with its Idempotency-Key a retry is safe even if this request's change was committed after all.
            LogStoreUnavailable(logger, context.Request.Method, context.Request.Path, store.DescribeUnavailable(exception));
            if (ConsoleErrorPage.Serves(context))
            {
                context.Response.Headers.RetryAfter = ((int)Math.Ceiling(api.Value.StoreUnavailableRetryAfter.TotalSeconds)).ToString(System.Globalization.CultureInfo.InvariantCulture);
                await ConsoleErrorPage.WriteAsync(context, StatusCodes.Status503ServiceUnavailable, "The database is out of reach",
                    "Nothing is wrong with what you asked; the service cannot reach its database just now. Try again in a few seconds.");
                return true;
            }

            await StoreUnavailable.WriteAsync(context, api.Value, exception);
            return true;
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

        if (ConsoleErrorPage.Serves(context))
        {
            // A console form that cannot be read is, in practice, one whose antiforgery token expired or was never sent.
            await ConsoleErrorPage.WriteAsync(context, problem.Status!.Value, problem.Title ?? "Error", problem.Status == StatusCodes.Status400BadRequest
                ? ConsoleErrorPage.ExpiredForm
                : problem.Detail ?? "");
            return true;
        }

        context.Response.StatusCode = problem.Status!.Value;
        return await problems.TryWriteAsync(new ProblemDetailsContext { HttpContext = context, ProblemDetails = problem, Exception = exception });
    }

    [LoggerMessage(Level = LogLevel.Debug, Message = "Bad request {Method} {Path}: {Reason}")]
    private static partial void LogBadRequest(ILogger logger, string method, PathString path, string reason);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Store unavailable in {Method} {Path}, answered 503: {Reason}")]
    private static partial void LogStoreUnavailable(ILogger logger, string method, PathString path, string reason);

    [LoggerMessage(Level = LogLevel.Error, Message = "Unhandled error in {Method} {Path}")]
    private static partial void LogUnhandled(ILogger logger, Exception exception, string method, PathString path);
}
