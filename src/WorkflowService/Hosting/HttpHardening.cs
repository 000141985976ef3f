using Microsoft.AspNetCore.Cors.Infrastructure;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Configuration;

namespace WorkflowService.Hosting;

/// <summary>Transport and header settings for a node exposed directly, without a gateway in front ("Http" section).</summary>
public sealed class HttpOptions
{
    public const string Section = "Http";

    /// <summary>Redirect plain HTTP to HTTPS (needs an HTTPS endpoint in ASPNETCORE_URLS / Kestrel settings).</summary>
    public bool HttpsRedirection { get; set; }

    /// <summary>Send Strict-Transport-Security on HTTPS answers (outside Development).</summary>
    public bool Hsts { get; set; }

    /// <summary>Origins a browser may call from; empty (the default) answers no cross-origin request.</summary>
    public string[] CorsOrigins { get; set; } = [];
}

internal static class HttpHardening
{
    private const string CorsPolicy = "configured-origins";

    public static IServiceCollection AddHttpHardening(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddSettings<HttpOptions>(configuration.GetSection(HttpOptions.Section))
            .Validate(o => o.CorsOrigins.All(origin => Uri.TryCreate(origin, UriKind.Absolute, out var uri) && uri.AbsolutePath == "/"
                                                       && !origin.EndsWith('/') && uri.Scheme is "https" or "http"),
                "Http:CorsOrigins must list origins such as https://app.example.com (scheme, host and port; no path, no trailing slash).");
        // No "Server: Kestrel" banner on any answer.
        services.Configure<KestrelServerOptions>(o => o.AddServerHeader = false);
        services.AddCors();
        services.AddOptions<CorsOptions>().Configure<IOptions<HttpOptions>>((cors, http) => cors.AddPolicy(CorsPolicy, policy => policy
            .WithOrigins(http.Value.CorsOrigins)
            .AllowAnyHeader()
            .AllowAnyMethod()
            .WithExposedHeaders("Location", "Retry-After")));
        services.AddHsts(o => o.MaxAge = TimeSpan.FromDays(365));
        return services;
    }

    public static WebApplication UseHttpHardening(this WebApplication app)
    {
        var options = app.Services.GetRequiredService<IOptions<HttpOptions>>().Value;
        if (options.Hsts && !app.Environment.IsDevelopment())
        {
            app.UseHsts();
        }

        if (options.HttpsRedirection)
        {
            app.UseHttpsRedirection();
        }

        // Set as the answer starts, so that answers the exception handler rewrites (it clears headers) carry it too.
        app.Use((context, next) =>
        {
            context.Response.OnStarting(static state =>
            {
                ((HttpResponse)state).Headers.XContentTypeOptions = "nosniff";
                return Task.CompletedTask;
            }, context.Response);
            return next(context);
        });
        if (options.CorsOrigins.Length > 0)
        {
            app.UseCors(CorsPolicy);
        }

        return app;
    }
}
