using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Options;

namespace WorkflowService.Api;

/// <summary>The request-body limit ("Api" section).</summary>
public sealed class ApiOptions
{
    public const string Section = "Api";

    /// <summary>Largest request body accepted, in bytes; larger ones get 413 (default 1 MiB).</summary>
    [System.ComponentModel.DataAnnotations.Range(1024, 1L << 30)]
    public long MaxRequestBodyBytes { get; set; } = 1 << 20;

    /// <summary>Largest definition accepted for publishing, in bytes of JSON (default 256 KiB).</summary>
    [System.ComponentModel.DataAnnotations.Range(1024, 1L << 30)]
    public int MaxDefinitionBytes { get; set; } = 256 * 1024;

    /// <summary>Most steps a definition may have, counting those inside parallel branches (default 1000).</summary>
    [System.ComponentModel.DataAnnotations.Range(1, 100_000)]
    public int MaxDefinitionSteps { get; set; } = 1000;

    /// <summary>
    /// Longest a request may take before it is answered 503 with Retry-After (default 10 s, shorter than most callers'
    /// own timeouts, so that they hear why); a long-poll may take its own bound (Workers:MaxLongPoll) on top. Bounds every
    /// request while the store does not answer.
    /// </summary>
    [System.ComponentModel.DataAnnotations.Range(typeof(TimeSpan), "00:00:01", "00:10:00")]
    public TimeSpan RequestTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>Retry-After of the 503 answered while the store is out of reach (default 5 s).</summary>
    [System.ComponentModel.DataAnnotations.Range(typeof(TimeSpan), "00:00:01", "00:10:00")]
    public TimeSpan StoreUnavailableRetryAfter { get; set; } = TimeSpan.FromSeconds(5);
}

/// <summary>Applies <see cref="ApiOptions.MaxRequestBodyBytes"/> to every request, on any server.</summary>
internal sealed class RequestSizeLimit(RequestDelegate next, IOptions<ApiOptions> options)
{
    public Task InvokeAsync(HttpContext context)
    {
        var limit = options.Value.MaxRequestBodyBytes;
        if (context.Request.ContentLength > limit)
        {
            throw new BadHttpRequestException("request body too large", StatusCodes.Status413PayloadTooLarge);
        }

        if (context.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } feature)
        {
            feature.MaxRequestBodySize = limit;
        }

        return next(context);
    }
}
