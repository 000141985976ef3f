using System.Net;

namespace WorkflowService.Testing;

/// <summary>A call to the service that did not answer as a client expects (a status, a body).</summary>
internal sealed class ApiCallException(string call, HttpStatusCode? status, string detail)
    : Exception($"{call}: {(status is { } s ? $"{(int)s} " : string.Empty)}{detail}")
{
    public HttpStatusCode? Status { get; } = status;
}
