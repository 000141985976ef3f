namespace WorkflowService.Engine.Execution;

/// <summary>What an http step asks for, computed when the step is reached and carried by its $http signal.</summary>
public sealed record CallOutRequest(
    string Method,
    string Url,
    string? BodyJson,
    IReadOnlyDictionary<string, string>? Headers,
    int TimeoutMs,
    int Retries);

/// <summary>Performs call-outs: bounded by the request's timeout per attempt and its retry count.</summary>
public interface ICallOutClient
{
    /// <summary>Returns the response as the JSON that lands in the step's output: <c>{ "status": 200, "body": ... }</c>.</summary>
    /// <exception cref="CallOutFailedException">No attempt succeeded (error status, timeout, refused, not allowed).</exception>
    Task<string> SendAsync(CallOutRequest request, CancellationToken cancellationToken);
}

public sealed class CallOutFailedException(string message, Exception? inner = null) : Exception(message, inner);
