using System.Buffers;
using System.Net;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Polly;
using Polly.Retry;
using Polly.Timeout;
using WorkflowService.Engine.Execution;

namespace WorkflowService.CallOuts;

/// <summary>
/// Performs http steps with HttpClient, through the <see cref="EgressPolicy"/> (checked on every connection). Each attempt
/// (connect, headers and the whole body) is bounded by the step's timeout, failed attempts are retried with jittered
/// exponential backoff up to the step's retry count, and the call as a whole by CallOuts:MaxCallDuration, so a server that
/// drips its answer cannot hold a signal worker. 5xx, 408, 429, transport failures and timeouts are retried; other
/// non-success statuses and refusals fail at once. A failure tells the instance what failed in general terms (could not
/// connect, timed out, refused by which rule); what the network said goes to the log only.
/// </summary>
public sealed partial class HttpCallOutClient : ICallOutClient
{
    public const string ClientName = "call-outs";

    private static readonly ResiliencePropertyKey<CallOutRequest> RequestKey = new("workflow.callout.request");

    private readonly IHttpClientFactory _clients;
    private readonly EgressPolicy _egress;
    private readonly CallOutOptions _options;
    private readonly ILogger<HttpCallOutClient> _logger;
    private readonly ResiliencePipeline<Answer> _pipeline;

    public HttpCallOutClient(
        IHttpClientFactory clients, EgressPolicy egress, IOptions<CallOutOptions> options, TimeProvider time, ILogger<HttpCallOutClient> logger)
    {
        _clients = clients;
        _egress = egress;
        _options = options.Value;
        _logger = logger;
        // One pipeline for every call: the step's timeout and retries are read from the call's context.
        _pipeline = new ResiliencePipelineBuilder<Answer> { TimeProvider = time }
            .AddTimeout(_options.MaxCallDuration)
            .AddRetry(new RetryStrategyOptions<Answer>
            {
                MaxRetryAttempts = 10, // the most a definition may ask for
                ShouldHandle = args => ValueTask.FromResult(
                    args.AttemptNumber < args.Context.Properties.GetValue(RequestKey, null!).Retries && Retryable(args.Outcome)),
                BackoffType = DelayBackoffType.Exponential,
                UseJitter = true,
                Delay = TimeSpan.FromMilliseconds(200),
                MaxDelay = TimeSpan.FromSeconds(10),
            })
            .AddTimeout(new TimeoutStrategyOptions
            {
                TimeoutGenerator = args => ValueTask.FromResult(
                    TimeSpan.FromMilliseconds(Math.Max(args.Context.Properties.GetValue(RequestKey, null!).TimeoutMs, 1))),
            })
            .Build();
    }

    public async Task<string> SendAsync(CallOutRequest request, CancellationToken cancellationToken)
    {
        // The request is final from here on: each attempt builds its message from it (RequestMessage).
        var url = Target(request);
        var context = ResilienceContextPool.Shared.Get(cancellationToken);
        context.Properties.Set(RequestKey, request);
        Answer answer;
        try
        {
            answer = await _pipeline.ExecuteAsync(
                static (context, state) => state.Client.AttemptAsync(state.Url, state.Request, context.CancellationToken),
                context, (Client: this, Url: url, Request: request)).ConfigureAwait(false);
        }
        catch (Exception e) when (e is HttpRequestException or IOException or TimeoutRejectedException)
        {
            throw Failed(e, url, request);
        }
        finally
        {
            ResilienceContextPool.Shared.Return(context);
        }

        if (answer.Status is < 200 or > 299)
        {
            throw new CallOutFailedException($"{request.Method} {url.GetLeftPart(UriPartial.Path)} answered {answer.Status} {answer.Reason}");
        }

        var result = new JsonObject
        {
            ["status"] = answer.Status,
            ["body"] = ParseBody(answer.Body!, answer.MediaType),
        };
        return result.ToJsonString();
    }

    /// <summary>The URL the call goes to, refused before any attempt when its scheme, host or port is not allowed.</summary>
    private Uri Target(CallOutRequest request)
    {
        if (!Uri.TryCreate(request.Url, UriKind.Absolute, out var url) || url.Scheme is not ("http" or "https"))
        {
            throw new CallOutFailedException($"'{url?.GetLeftPart(UriPartial.Path) ?? request.Url}' is not an absolute http(s) URL");
        }

        return Target(url);
    }

    /// <summary><paramref name="url"/>, refused when its host or port is not allowed.</summary>
    private Uri Target(Uri url) =>
        _egress.RefusalOf(url.IdnHost, url.Port) is { } refusal ? throw new CallOutFailedException(refusal) : url;

    /// <summary>The HTTP message of one attempt: the one place a call's request is turned into what is sent.</summary>
    private static HttpRequestMessage RequestMessage(Uri url, CallOutRequest request)
    {
        var message = new HttpRequestMessage(new HttpMethod(request.Method), url)
        {
            // Never HTTP/3: QUIC opens its own connections, past the egress policy's connect callback.
            Version = HttpVersion.Version11,
            VersionPolicy = HttpVersionPolicy.RequestVersionOrLower,
        };
        if (request.BodyJson is not null)
        {
            message.Content = new StringContent(request.BodyJson, Encoding.UTF8, "application/json");
        }

        if (request.Headers is { } headers)
        {
            foreach (var (name, value) in headers)
            {
                message.Headers.TryAddWithoutValidation(name, value);
            }
        }

        return message;
    }

    /// <summary>
    /// One attempt, the body read within it: an answer that is not a success is returned without its body. Redirects are
    /// followed here, up to CallOuts:MaxRedirects, each hop's target checked like the first (and its connection by the
    /// policy). A hop to another origin carries none of the step's headers, since any of them may hold a secret; an https
    /// call never follows a redirect to http. Past the limit the redirect is the answer.
    /// </summary>
    private async ValueTask<Answer> AttemptAsync(Uri url, CallOutRequest request, CancellationToken cancellationToken)
    {
        var client = _clients.CreateClient(ClientName);
        for (var hops = 0; ; hops++)
        {
            using var message = RequestMessage(url, request);
            using var response = await client.SendAsync(message, HttpCompletionOption.ResponseHeadersRead, cancellationToken).ConfigureAwait(false);
            if (hops < _options.MaxRedirects && Redirect(response, url) is { } next)
            {
                request = Hop(request, response.StatusCode, SameOrigin(url, next));
                url = Target(next);
                continue;
            }

            return new Answer(
                (int)response.StatusCode,
                response.ReasonPhrase,
                response.IsSuccessStatusCode ? await ReadBoundedAsync(response, cancellationToken).ConfigureAwait(false) : null,
                response.Content.Headers.ContentType?.MediaType);
        }
    }

    /// <summary>Where a redirect sends the call; null when the answer is not one to follow.</summary>
    private static Uri? Redirect(HttpResponseMessage response, Uri from)
    {
        if (response.StatusCode is not (HttpStatusCode.MovedPermanently or HttpStatusCode.Found or HttpStatusCode.SeeOther
                or HttpStatusCode.TemporaryRedirect or HttpStatusCode.PermanentRedirect)
            || response.Headers.Location is not { } location
            || !Uri.TryCreate(from, location, out var next)
            || next.Scheme is not ("http" or "https")
            || (from.Scheme == Uri.UriSchemeHttps && next.Scheme == Uri.UriSchemeHttp))
        {
            return null;
        }

        return next;
    }

    private static bool SameOrigin(Uri from, Uri to) =>
        Uri.Compare(from, to, UriComponents.SchemeAndServer, UriFormat.UriEscaped, StringComparison.OrdinalIgnoreCase) == 0;

    /// <summary>
    /// The request of the next hop: 303, and 301 or 302 after a POST, go on as a GET without a body (as browsers and
    /// HttpClient do); 307 and 308 repeat the request. The step's headers go only where the first call went.
    /// </summary>
    private static CallOutRequest Hop(CallOutRequest request, HttpStatusCode status, bool sameOrigin)
    {
        var asGet = status == HttpStatusCode.SeeOther && request.Method != "HEAD"
            || status is HttpStatusCode.MovedPermanently or HttpStatusCode.Found && request.Method == "POST";
        return request with
        {
            Method = asGet ? "GET" : request.Method,
            BodyJson = asGet ? null : request.BodyJson,
            Headers = sameOrigin ? request.Headers : null,
        };
    }

    private static bool Retryable(Outcome<Answer> outcome) =>
        outcome.Exception is TimeoutRejectedException or IOException
        || (outcome.Exception is HttpRequestException e && Refusal(e) is null)
        || outcome.Result is { Status: >= 500 or (int)HttpStatusCode.RequestTimeout or (int)HttpStatusCode.TooManyRequests };

    /// <summary>The policy's refusal a connection failed with (wrapped by the handler), if that is why it failed.</summary>
    private static CallOutFailedException? Refusal(Exception? e)
    {
        for (; e is not null; e = e.InnerException)
        {
            if (e is CallOutFailedException refusal)
            {
                return refusal;
            }
        }

        return null;
    }

    /// <summary>What the instance is told: the rule that refused the call, or what failed in general terms (the log has the detail).</summary>
    private CallOutFailedException Failed(Exception e, Uri url, CallOutRequest request)
    {
        if (Refusal(e) is { } refusal)
        {
            return new CallOutFailedException(refusal.Message);
        }

        var target = $"{url.IdnHost}:{url.Port}";
        LogFailed(_logger, request.Method, target, Detail(e));
        return new CallOutFailedException(e switch
        {
            TimeoutRejectedException { Timeout: var limit } when limit == _options.MaxCallDuration =>
                $"the call to {target} took longer than {limit} with its retries (CallOuts:MaxCallDuration)",
            TimeoutRejectedException => $"the call to {target} did not finish within the step's timeout ({request.TimeoutMs} ms)",
            HttpRequestException { HttpRequestError: HttpRequestError.NameResolutionError or HttpRequestError.ConnectionError
                or HttpRequestError.SecureConnectionError or HttpRequestError.ProxyTunnelError } => $"could not connect to {target}",
            _ => $"the call to {target} failed before its answer was complete",
        });
    }

    // The messages of the exception and its causes (the OS's among them), for the log; they name no URL or query string.
    private static string Detail(Exception e)
    {
        var detail = new StringBuilder(e.GetType().Name).Append(": ").Append(e.Message);
        for (var inner = e.InnerException; inner is not null; inner = inner.InnerException)
        {
            detail.Append(" <- ").Append(inner.GetType().Name).Append(": ").Append(inner.Message);
        }

        return detail.ToString();
    }

    private async Task<string> ReadBoundedAsync(HttpResponseMessage response, CancellationToken cancellationToken)
    {
        var limit = _options.MaxResponseBytes;
        if (response.Content.Headers.ContentLength > limit)
        {
            throw TooLarge(limit);
        }

        var stream = await response.Content.ReadAsStreamAsync(cancellationToken).ConfigureAwait(false);
        await using var disposing = stream.ConfigureAwait(false);
        var buffer = ArrayPool<byte>.Shared.Rent(limit + 1);
        try
        {
            var read = 0;
            int n;
            while (read <= limit && (n = await stream.ReadAsync(buffer.AsMemory(read, limit + 1 - read), cancellationToken).ConfigureAwait(false)) > 0)
            {
                read += n;
            }

            return read > limit ? throw TooLarge(limit) : Encoding.UTF8.GetString(buffer, 0, read);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private static CallOutFailedException TooLarge(int limit) =>
        new($"the response is larger than {limit} bytes (CallOuts:MaxResponseBytes)");

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

    [LoggerMessage(Level = LogLevel.Warning, Message = "Call-out {Method} to {Target} failed: {Error}")]
    private static partial void LogFailed(ILogger logger, string method, string target, string error);

    /// <summary>What one attempt got back: the body only for a success.</summary>
    private readonly record struct Answer(int Status, string? Reason, string? Body, string? MediaType);
}
