using Microsoft.Extensions.Options;
using WorkflowService.Engine.Configuration;
using WorkflowService.Engine.Execution;

namespace WorkflowService.Hosting;

internal static class CallOutRegistration
{
    /// <summary>The http steps' client: its settings, checked at start-up, and a handler whose every connection goes through the egress policy.</summary>
    public static IServiceCollection AddCallOuts(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddSettings<CallOutOptions>(configuration.GetSection(CallOutOptions.Section));
        services.AddSingleton<IValidateOptions<CallOutOptions>, CallOutOptions.Validator>();
        services.AddSingleton<EgressPolicy>();
        services.AddHttpClient(HttpCallOutClient.ClientName, c => c.Timeout = Timeout.InfiniteTimeSpan) // each attempt has its own deadline
            .ConfigurePrimaryHttpMessageHandler(provider => new SocketsHttpHandler
            {
                ConnectCallback = provider.GetRequiredService<EgressPolicy>().ConnectAsync,
                // A proxy would be the address connected to, and the policy would check it instead of the target.
                UseProxy = false,
                // The client follows redirects itself (HttpCallOutClient), so that a hop to another host carries
                // none of the step's headers: the handler would keep every header but Authorization.
                AllowAutoRedirect = false,
                UseCookies = false,
            });
        services.AddSingleton<HttpCallOutClient>();
        // Secrets are put into the request on its way to the client, after the engine and before the wire.
        services.AddSingleton<ICallOutClient>(provider =>
            new CallOutSecrets(provider.GetRequiredService<HttpCallOutClient>(), provider.GetRequiredService<IConfiguration>()));
        return services;
    }
}
