using System.Text.Json;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Execution;

/// <summary>
/// What an http step asks for, computed when the step is reached and carried by its $http signal. Secrets are in it
/// as references (<see cref="SecretReferences"/>) with <see cref="SecretNonce"/>, never as values; readers see
/// <see cref="Redacted"/>.
/// </summary>
public sealed record CallOutRequest(
    string Method,
    string Url,
    string? BodyJson,
    IReadOnlyDictionary<string, string>? Headers,
    int TimeoutMs,
    int Retries,
    string? SecretNonce = null)
{
    private const string Hidden = "***";

    /// <summary>
    /// The URL as readers see it: no user information, every query value hidden, secret references by name only.
    /// <c>https://api.example.com/quotes?key=***&amp;page=***</c>.
    /// </summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1055:URI-like return values should not be strings", Justification = "The redacted form is text shown to readers (history, errors); it need not parse as a URI, and a secret reference in it would not.")]
    public static string RedactUrl(string url)
    {
        ArgumentNullException.ThrowIfNull(url);
        var text = SecretReferences.Redact(url);
        var query = text.IndexOf('?', StringComparison.Ordinal);
        var fragment = text.IndexOf('#', StringComparison.Ordinal);
        var path = query >= 0 ? text[..query] : fragment >= 0 ? text[..fragment] : text;
        var scheme = path.IndexOf("://", StringComparison.Ordinal);
        var at = scheme >= 0 ? path.IndexOf('@', scheme + 3) : -1;
        var slash = scheme >= 0 ? path.IndexOf('/', scheme + 3) : -1;
        if (at >= 0 && (slash < 0 || at < slash))
        {
            path = path[..(scheme + 3)] + path[(at + 1)..];
        }

        if (query < 0)
        {
            return path;
        }

        var end = fragment > query ? fragment : text.Length;
        var names = text[(query + 1)..end].Split('&', StringSplitOptions.RemoveEmptyEntries)
            .Select(pair => pair.Split('=', 2)[0] + "=" + Hidden);
        return path + "?" + string.Join('&', names);
    }

    /// <summary>The $http signal's payload as readers see it: header values hidden, the URL redacted, secrets by name.</summary>
    public static string Redacted(string payloadJson)
    {
        CallOutRequest? request;
        try
        {
            request = JsonSerializer.Deserialize<CallOutRequest>(payloadJson, EngineJson.Options);
        }
        catch (JsonException)
        {
            request = null;
        }

        if (request is null)
        {
            return "null";
        }

        return JsonSerializer.Serialize(request with
        {
            Url = RedactUrl(request.Url),
            BodyJson = request.BodyJson is null ? null : SecretReferences.Redact(request.BodyJson),
            Headers = request.Headers?.ToDictionary(h => h.Key, _ => Hidden, StringComparer.OrdinalIgnoreCase),
            SecretNonce = null,
        }, EngineJson.Options);
    }
}

/// <summary>Performs call-outs: bounded by the request's timeout per attempt and its retry count.</summary>
public interface ICallOutClient
{
    /// <summary>Returns the response as the JSON that lands in the step's output: <c>{ "status": 200, "body": ... }</c>.</summary>
    /// <exception cref="CallOutFailedException">No attempt succeeded (error status, timeout, refused, not allowed).</exception>
    Task<string> SendAsync(CallOutRequest request, CancellationToken cancellationToken);
}

public sealed class CallOutFailedException(string message, Exception? inner = null) : Exception(message, inner);
