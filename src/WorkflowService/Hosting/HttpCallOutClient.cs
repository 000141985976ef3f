using System.Net;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Microsoft.Extensions.Options;
using Polly;
using Polly.Retry;
using Polly.Timeout;
using WorkflowService.Engine.Execution;

namespace WorkflowService.Hosting;

/// <summary>
/// Performs http steps with HttpClient: each attempt bounded by the step's timeout (Polly), failed attempts retried
/// with jittered exponential backoff up to the step's retry count. 5xx, 408, 429 and transport failures are retried;
/// other non-success statuses fail at once.
/// </summary>
public sealed partial class HttpCallOutClient(
    IHttpClientFactory clients, IOptions<CallOutOptions> options, TimeProvider time, ILogger<HttpCallOutClient> logger) : ICallOutClient
{
    public const string ClientName = "call-outs";

    public async Task<string> SendAsync(CallOutRequest request, CancellationToken cancellationToken)
    {
        if (!Uri.TryCreate(request.Url, UriKind.Absolute, out var url) || url.Scheme is not ("http" or "https"))
        {
            throw new CallOutFailedException($"'{request.Url}' is not an absolute http(s) URL");
        }

        var allowed = options.Value.AllowedHosts;
        if (allowed.Length > 0 && !allowed.Contains(url.Host, StringComparer.OrdinalIgnoreCase))
        {
            throw new CallOutFailedException($"calls to {url.Host} are not allowed (CallOuts:AllowedHosts)");
        }

        var pipeline = new ResiliencePipelineBuilder<HttpResponseMessage> { TimeProvider = time }
            .AddRetry(new RetryStrategyOptions<HttpResponseMessage>
            {
                MaxRetryAttempts = Math.Max(request.Retries, 0) is 0 ? 1 : request.Retries,
                ShouldHandle = args => ValueTask.FromResult(request.Retries > 0 && Retryable(args.Outcome)),
                BackoffType = DelayBackoffType.Exponential,
                UseJitter = true,
                Delay = TimeSpan.FromMilliseconds(200),
                MaxDelay = TimeSpan.FromSeconds(10),
            })
            .AddTimeout(TimeSpan.FromMilliseconds(Math.Max(request.TimeoutMs, 1)))
            .Build();

        var client = clients.CreateClient(ClientName);
        HttpResponseMessage response;
        try
        {
            response = await pipeline.ExecuteAsync(async ct =>
            {
                using var message = new HttpRequestMessage(new HttpMethod(request.Method), url);
                if (request.BodyJson is not null)
                {
                    message.Content = new StringContent(request.BodyJson, Encoding.UTF8, "application/json");
                }

                foreach (var (name, value) in request.Headers ?? new Dictionary<string, string>())
                {
                    message.Headers.TryAddWithoutValidation(name, value);
                }

                return await client.SendAsync(message, HttpCompletionOption.ResponseHeadersRead, ct).ConfigureAwait(false);
            }, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is HttpRequestException or TimeoutRejectedException)
        {
            LogFailed(logger, request.Method, url.Host, e.Message);
            throw new CallOutFailedException($"{request.Method} {url.GetLeftPart(UriPartial.Path)} failed: {e.Message}", e);
        }

        using (response)
        {
            var body = await ReadBoundedAsync(response, cancellationToken).ConfigureAwait(false);
            if (!response.IsSuccessStatusCode)
            {
                throw new CallOutFailedException(
                    $"{request.Method} {url.GetLeftPart(UriPartial.Path)} answered {(int)response.StatusCode} {response.ReasonPhrase}");
            }

            var result = new JsonObject
            {
                ["status"] = (int)response.StatusCode,
                ["body"] = ParseBody(body, response.Content.Headers.ContentType?.MediaType),
            };
            return result.ToJsonString();
        }
    }

    private static bool Retryable(Outcome<HttpResponseMessage> outcome) =>
        outcome.Exception is HttpRequestException or TimeoutRejectedException
        || outcome.Result is { StatusCode: >= HttpStatusCode.InternalServerError or HttpStatusCode.RequestTimeout or HttpStatusCode.TooManyRequests };

    private async Task<string> ReadBoundedAsync(HttpResponseMessage response, CancellationToken cancellationToken)
    {
        var limit = options.Value.MaxResponseBytes;
        await using var stream = await response.Content.ReadAsStreamAsync(cancellationToken).ConfigureAwait(false);
        var buffer = new byte[limit + 1];
        var read = 0;
        int n;
        while (read < buffer.Length && (n = await stream.ReadAsync(buffer.AsMemory(read), cancellationToken).ConfigureAwait(false)) > 0)
        {
            read += n;
        }

        if (read > limit)
        {
            throw new CallOutFailedException($"the response is larger than {limit} bytes (CallOuts:MaxResponseBytes)");
        }

        return Encoding.UTF8.GetString(buffer, 0, read);
    }

    private static JsonNode? ParseBody(string body, string? mediaType)
    {
        if (body.Length == 0)
        {
            return null;
        }

        if (mediaType is not null && mediaType.Contains("json", StringComparison.OrdinalIgnoreCase))
        {
            try
            {
                return JsonNode.Parse(body);
            }
            catch (JsonException)
            {
                // Declared JSON but is not: keep the text.
            }
        }

        return JsonValue.Create(body);
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Call-out {Method} to {Host} failed: {Error}")]
    private static partial void LogFailed(ILogger logger, string method, string host, string error);
}
