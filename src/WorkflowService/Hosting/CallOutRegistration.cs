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
            .ConfigurePrimaryHttpMessageHandler(provider =>
            {
                var options = provider.GetRequiredService<IOptions<CallOutOptions>>().Value;
                return new SocketsHttpHandler
                {
                    ConnectCallback = provider.GetRequiredService<EgressPolicy>().ConnectAsync,
                    // A proxy would be the address connected to, and the policy would check it instead of the target.
                    UseProxy = false,
                    // The handler follows a redirect on a new connection, which the policy checks like the first.
                    AllowAutoRedirect = options.MaxRedirects > 0,
                    MaxAutomaticRedirections = Math.Max(options.MaxRedirects, 1),
                    UseCookies = false,
                };
            });
        services.AddSingleton<HttpCallOutClient>();
        // Secrets are put into the request on its way to the client, after the engine and before the wire.
        services.AddSingleton<ICallOutClient>(provider =>
            new CallOutSecrets(provider.GetRequiredService<HttpCallOutClient>(), provider.GetRequiredService<IConfiguration>()));
        return services;
    }
}
