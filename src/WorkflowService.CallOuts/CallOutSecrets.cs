using System.Text.Json;
using Microsoft.Extensions.Configuration;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Expressions;

namespace WorkflowService.CallOuts;

/// <summary>
/// Puts the values of the secrets an http step names (<c>secret('billing-api')</c>) into its request as it is sent, and
/// nowhere else: the engine, the signal's payload, history and errors hold references only. A value comes from
/// <c>CallOuts:Secrets:{name}</c>, read at call time: an environment variable (<c>CallOuts__Secrets__billing-api</c>) or
/// a mounted secret file of that name (see <see cref="SecretFiles"/>). A secret goes into headers, the body or the query
/// string, where logs and traces do not show it, never into the host or path.
/// </summary>
public sealed class CallOutSecrets(ICallOutClient inner, IConfiguration configuration) : ICallOutClient
{
    public const string Section = "CallOuts:Secrets";

    public Task<string> SendAsync(CallOutRequest request, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(request);
        return inner.SendAsync(request.SecretNonce is { } nonce ? Resolve(request, nonce) : request, cancellationToken);
    }

    private CallOutRequest Resolve(CallOutRequest request, string nonce)
    {
        var query = request.Url.IndexOf('?', StringComparison.Ordinal);
        if (SecretReferences.Refers(query >= 0 ? request.Url[..query] : request.Url, nonce))
        {
            throw new CallOutFailedException("a secret may be sent in headers, the body or the query string, not in the URL's host or path");
        }

        return request with
        {
            Url = SecretReferences.Resolve(request.Url, nonce, name => Uri.EscapeDataString(Value(name))),
            Headers = request.Headers?.ToDictionary(h => h.Key, h => SecretReferences.Resolve(h.Value, nonce, Value), StringComparer.OrdinalIgnoreCase),
            // The reference sits inside a JSON string: the value goes in escaped as one.
            BodyJson = request.BodyJson is null ? null : SecretReferences.Resolve(request.BodyJson, nonce, name => JsonEncodedText.Encode(Value(name)).ToString()),
            SecretNonce = null,
        };
    }

    private string Value(string name) =>
        configuration[$"{Section}:{name}"] is { Length: > 0 } value
            ? value
            : throw new CallOutFailedException($"the secret '{name}' is not configured ({Section}:{name})");
}
