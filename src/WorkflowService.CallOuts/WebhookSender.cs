using System.Net;
using System.Net.Http.Headers;
using System.Text;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Execution;

namespace WorkflowService.CallOuts;

/// <summary>
/// Posts a delivery to its subscription's endpoint as a structured CloudEvent (or, to a subscription that takes batches,
/// deliveries as one CloudEvents batch: <see cref="EventBatch"/>), signed the Standard Webhooks way, through
/// the call-outs' egress rules (the same hosts, ports and networks an http step may reach). A redirect is not followed:
/// it is the receiver's answer, and retried like any other that is not 2xx.
/// </summary>
internal sealed class WebhookSender(IHttpClientFactory clients, EgressPolicy egress, TimeProvider time) : IEventSender
{
    public const string ClientName = "events";

    private static readonly MediaTypeHeaderValue CloudEventsJson = new("application/cloudevents+json") { CharSet = "utf-8" };
    private static readonly MediaTypeHeaderValue CloudEventsBatchJson = new(EventBatch.MediaType) { CharSet = "utf-8" };

    public string? RefusalOf(Uri endpoint)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        return egress.RefusalOf(endpoint.IdnHost, endpoint.Port)
            ?? (IPAddress.TryParse(endpoint.IdnHost, out var address) && egress.RuleAgainst(address) is { } rule
                ? $"calls to {endpoint.IdnHost} are refused: {rule}"
                : null);
    }

    public async Task<DeliveryAttempt> SendAsync(Subscription subscription, IReadOnlyList<EventDelivery> deliveries, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(subscription);
        ArgumentNullException.ThrowIfNull(deliveries);
        var batched = EventBatch.IsBatched(subscription);
        if (deliveries.Count == 0 || (deliveries.Count > 1 && !batched))
        {
            throw new ArgumentException($"one delivery, or up to {subscription.MaxEventsPerBatch} for a subscription that takes batches, is posted at a time",
                nameof(deliveries));
        }

        var endpoint = new Uri(subscription.Endpoint);
        if (egress.RefusalOf(endpoint.IdnHost, endpoint.Port) is { } refusal)
        {
            return new DeliveryAttempt(null, refusal);
        }

        var now = time.GetUtcNow();
        var id = batched ? EventBatch.IdOf(deliveries) : deliveries[0].Id.ToString();
        var body = batched ? EventBatch.Body(deliveries) : deliveries[0].Body;
        var timestamp = now.ToUnixTimeSeconds();
        using var request = new HttpRequestMessage(HttpMethod.Post, endpoint)
        {
            Content = new ByteArrayContent(Encoding.UTF8.GetBytes(body)) { Headers = { ContentType = batched ? CloudEventsBatchJson : CloudEventsJson } },
        };
        request.Headers.TryAddWithoutValidation(WebhookSignature.IdHeader, id);
        request.Headers.TryAddWithoutValidation(WebhookSignature.TimestampHeader, timestamp.ToString(System.Globalization.CultureInfo.InvariantCulture));
        request.Headers.TryAddWithoutValidation(WebhookSignature.SignatureHeader,
            WebhookSignature.Sign(id, timestamp, body, subscription.SecretsAt(now.UtcDateTime)));
        try
        {
            using var response = await clients.CreateClient(ClientName).SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cancellationToken)
                .ConfigureAwait(false);
            var status = (int)response.StatusCode;
            return new DeliveryAttempt(status, status is >= 200 and < 300 ? null : $"the receiver answered {status} {response.ReasonPhrase}");
        }
        catch (HttpRequestException e)
        {
            // The egress rules' refusal, a refused connection, a reset, a TLS failure: no answer, in the words of its cause.
            return new DeliveryAttempt(null, (e.InnerException as CallOutFailedException)?.Message ?? $"no answer: {e.Message}");
        }
    }
}
