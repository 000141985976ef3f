using WorkflowService.Engine.Configuration;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.FaultHost;

/// <summary>Puts the failing decorators around the store's instance and queue facets, and maps GET /fault-injection.</summary>
internal static class StoreFaultRegistration
{
    public static WebApplicationBuilder AddStoreFaults(this WebApplicationBuilder builder)
    {
        builder.Services.AddSettings<StoreFaultOptions>(builder.Configuration.GetSection(StoreFaultOptions.Section));
        builder.Services.AddSingleton<StoreFaultInjector>();
        builder.Services.Decorate<IInstanceStore>((inner, p) => new FaultyInstanceStore(inner, p.GetRequiredService<StoreFaultInjector>()));
        builder.Services.Decorate<ISignalQueue>((inner, p) => new FaultySignalQueue(inner, p.GetRequiredService<StoreFaultInjector>()));
        return builder;
    }

    /// <summary>What the injector did, for the fault runner (this host is never deployed, so the endpoint asks for no key).</summary>
    public static WebApplication MapStoreFaults(this WebApplication app)
    {
        app.MapGet("/fault-injection", (StoreFaultInjector faults) => faults.Counts()).AllowAnonymous();
        return app;
    }

    /// <summary>Replaces the registration of <typeparamref name="TService"/> with <paramref name="decorate"/> around what it made.</summary>
    private static void Decorate<TService>(this IServiceCollection services, Func<TService, IServiceProvider, TService> decorate)
        where TService : class
    {
        var original = services.LastOrDefault(d => d.ServiceType == typeof(TService) && !d.IsKeyedService)
            ?? throw new InvalidOperationException($"{typeof(TService).Name} is not registered: the store registration changed");
        services.Remove(original);
        services.Add(ServiceDescriptor.Describe(typeof(TService), p => decorate((TService)Create(p, original), p), original.Lifetime));
    }

    private static object Create(IServiceProvider services, ServiceDescriptor descriptor) =>
        descriptor.ImplementationInstance
        ?? descriptor.ImplementationFactory?.Invoke(services)
        ?? ActivatorUtilities.CreateInstance(services, descriptor.ImplementationType!);
}
