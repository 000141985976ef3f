using System.Globalization;
using Microsoft.AspNetCore.Http.Timeouts;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Runtime;

namespace WorkflowService.Api;

/// <summary>
/// The one answer to a request the store could not serve in time (down, paused, saturated; or the request's time,
/// Api:RequestTimeout, ran out): 503 problem details with Retry-After, so that the client tries again instead of hanging.
/// </summary>
internal static partial class StoreUnavailable
{
    /// <summary>The policy of a long-poll (GET /instances/{id}?waitFor=…): its own bound, then the usual time.</summary>
    public const string LongPollPolicy = "long-poll";

    public static ValueTask WriteAsync(HttpContext context, ApiOptions api, Exception? failure)
    {
        var retryAfter = (int)Math.Ceiling(api.StoreUnavailableRetryAfter.TotalSeconds);
        return CallerLimits.WriteTooBusyAsync(context, StatusCodes.Status503ServiceUnavailable, "Store unavailable",
            failure is null
                ? $"The request was not answered within {api.RequestTimeout.TotalSeconds.ToString(CultureInfo.InvariantCulture)} s (Api:RequestTimeout). Try again in {retryAfter} s; a request repeated with the same Idempotency-Key is applied once."
                : $"The workflow store did not answer. Try again in {retryAfter} s; a request repeated with the same Idempotency-Key is applied once.",
            retryAfter);
    }

    /// <summary>
    /// Stops awaiting the handler once the request's deadline (its <c>RequestAborted</c>, which the request-timeout
    /// middleware cancels) has passed, so that the middleware answers 503 at the deadline. Without it a store call that
    /// does not stop at its token (a database driver waiting out its own connect timeout on a paused server) held the
    /// answer seconds past Api:RequestTimeout. The handler, left behind, meets the same cancelled token at its next store
    /// call and stops there; what it had already committed stays committed, as with any ambiguous answer (a request
    /// repeated with its Idempotency-Key is applied once).
    /// </summary>
    public static async ValueTask<object?> AnswerWithinDeadlineAsync(EndpointFilterInvocationContext context, EndpointFilterDelegate next)
    {
        var handling = next(context);
        if (handling.IsCompleted)
        {
            return await handling.ConfigureAwait(false);
        }

        var task = handling.AsTask();
        try
        {
            return await task.WaitAsync(context.HttpContext.RequestAborted).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!task.IsCompleted)
        {
            // Left behind: what it still meets is logged, never lost unseen.
            var logger = context.HttpContext.RequestServices.GetRequiredService<ILoggerFactory>().CreateLogger(typeof(StoreUnavailable));
            var request = $"{context.HttpContext.Request.Method} {context.HttpContext.Request.Path}";
            _ = task.ContinueWith(static (left, state) =>
            {
                var (log, what) = ((ILogger, string))state!;
                if (left.Exception?.GetBaseException() is { } failure and not OperationCanceledException)
                {
                    LogLeftBehindFailed(log, failure, what);
                }
            }, (logger, request), CancellationToken.None, TaskContinuationOptions.OnlyOnFaulted, TaskScheduler.Default);
            throw;
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "{Request}, answered 503 at its deadline, failed afterwards")]
    private static partial void LogLeftBehindFailed(ILogger logger, Exception exception, string request);

    /// <summary>Request timeouts: Api:RequestTimeout for every request, a long-poll's bound on top of it for a long-poll.</summary>
    public static IServiceCollection AddRequestDeadlines(this IServiceCollection services)
    {
        services.AddRequestTimeouts();
        services.AddOptions<RequestTimeoutOptions>().Configure<IOptions<ApiOptions>, IOptions<WorkerOptions>>((timeouts, api, workers) =>
        {
            timeouts.DefaultPolicy = Policy(api.Value, api.Value.RequestTimeout);
            timeouts.AddPolicy(LongPollPolicy, Policy(api.Value, workers.Value.MaxLongPoll + api.Value.RequestTimeout));
        });
        return services;
    }

    private static RequestTimeoutPolicy Policy(ApiOptions api, TimeSpan timeout) => new()
    {
        Timeout = timeout,
        TimeoutStatusCode = StatusCodes.Status503ServiceUnavailable,
        WriteTimeoutResponse = context => WriteAsync(context, api, null).AsTask(),
    };
}
