using Microsoft.AspNetCore.Antiforgery;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Configuration;

namespace WorkflowService.OperatorConsole;

/// <summary>The operations console: its settings, its sign-in, its pages and actions.</summary>
public static class ConsoleRegistration
{
    public static IServiceCollection AddOperatorConsole(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddSettings<ConsoleOptions>(configuration.GetSection(ConsoleOptions.Section));
        services.AddRazorComponents();
        // Sessions and form tokens are protected with the Data Protection key ring: one application name for every node,
        // and, for several nodes behind one address, a key directory they share (Console:KeysDirectory).
        var protection = services.AddDataProtection().SetApplicationName("workflow-service");
        if (configuration[$"{ConsoleOptions.Section}:KeysDirectory"] is { Length: > 0 } keys)
        {
            protection.PersistKeysToFileSystem(new DirectoryInfo(keys));
        }

        services.AddAntiforgery(o => o.FormFieldName = "__antiforgery");
        services.AddOptions<AntiforgeryOptions>().Configure<IOptions<ConsoleOptions>, IHostEnvironment>((o, console, environment) =>
            o.Cookie = new ConsoleCookieBuilder(console.Value.CookiesAlwaysSecure(environment))
            {
                Name = "workflow-console-antiforgery",
                Path = ConsolePaths.Root,
                SameSite = SameSiteMode.Strict,
                HttpOnly = true,
                IsEssential = true,
            });
        services.AddSingleton<ConsoleSessionCookie>();
        services.AddSingleton<IValidateOptions<ConsoleOptions>, ConsoleOptionsValidator>();
        services.AddConsoleSingleSignOn(configuration);
        return services;
    }

    /// <summary>Before authentication: a console request presents its session as the Authorization header.</summary>
    public static IApplicationBuilder UseConsoleSession(this IApplicationBuilder app) =>
        Enabled(app) ? app.UseMiddleware<ConsoleSession>() : app;

    /// <summary>After authentication, before authorization: a visitor who is not signed in is sent to the sign-in page.</summary>
    public static IApplicationBuilder UseConsoleSignInGate(this IApplicationBuilder app) =>
        Enabled(app) ? app.UseMiddleware<ConsoleSignInGate>() : app;

    /// <summary>After authorization: the forms' antiforgery check.</summary>
    public static IApplicationBuilder UseConsoleAntiforgery(this IApplicationBuilder app) =>
        Enabled(app) ? app.UseAntiforgery() : app;

    public static IEndpointRouteBuilder MapOperatorConsole(this IEndpointRouteBuilder routes) =>
        Enabled(routes.ServiceProvider) ? routes.MapConsolePages().MapConsoleActions().MapConsoleSingleSignOn() : routes;

    private static bool Enabled(IApplicationBuilder app) => Enabled(app.ApplicationServices);

    private static bool Enabled(IServiceProvider services) => services.GetRequiredService<IOptions<ConsoleOptions>>().Value.Enabled;
}
