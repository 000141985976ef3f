using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Configuration;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Execution;

namespace WorkflowService.CallOuts;

/// <summary>The registration of the call-outs: the engine's <see cref="ICallOutClient"/> and what it is made of.</summary>
public static class CallOutRegistration
{
    /// <summary>The http steps' client: its settings, checked at start-up, and a handler whose every connection goes through the egress policy.</summary>
    public static IServiceCollection AddCallOuts(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddSettings<CallOutOptions>(configuration.GetSection(CallOutOptions.Section));
        services.AddSingleton<IValidateOptions<CallOutOptions>, CallOutOptions.Validator>();
        services.AddSingleton<EgressPolicy>();
        services.AddHttpClient(HttpCallOutClient.ClientName, c => c.Timeout = Timeout.InfiniteTimeSpan) // each attempt has its own deadline
            // The client follows redirects itself (HttpCallOutClient), so that a hop to another host carries none of the
            // step's headers.
            .ConfigurePrimaryHttpMessageHandler(provider => provider.GetRequiredService<EgressPolicy>().CreateHandler());
        services.AddSingleton<HttpCallOutClient>();
        // Events out (subscriptions) reach their receivers under the same egress rules, redirects unfollowed.
        services.AddHttpClient(WebhookSender.ClientName, c => c.Timeout = Timeout.InfiniteTimeSpan) // the dispatcher bounds each attempt
            .ConfigurePrimaryHttpMessageHandler(provider => provider.GetRequiredService<EgressPolicy>().CreateHandler())
            // The dispatcher records every attempt itself (the delivery log, a span, the metrics; docs/operations.md): the
            // factory's own request logging (a scope and two log calls a post) would only repeat it.
            .RemoveAllLoggers();
        services.AddSingleton<IEventSender, WebhookSender>();
        // Secrets are put into the request on its way to the client, after the engine and before the wire.
        services.AddSingleton<ICallOutClient>(provider =>
            new CallOutSecrets(provider.GetRequiredService<HttpCallOutClient>(), provider.GetRequiredService<IConfiguration>()));
        return services;
    }
}
