using System.Globalization;

namespace WorkflowService.OperatorConsole;

/// <summary>Where the console's pages live.</summary>
public static class ConsolePaths
{
    public static readonly PathString Root = "/console";
    public static readonly PathString SignIn = "/console/sign-in";
    public static readonly PathString SignOut = "/console/sign-out";
    public static readonly PathString Assets = "/console/assets";
    public static readonly PathString Live = "/console/live";
    public const string Instances = "/console/instances";
    public const string Definitions = "/console/definitions";
    public const string Tasks = "/console/tasks";
    public const string DeadLetters = "/console/dead-letters";
    public const string Subscriptions = "/console/subscriptions";
    public const string Schedules = "/console/schedules";

    public static string Instance(Guid id) => $"{Instances}/{id}";

    /// <summary>An instance's page with its history and signals each at a page of their own (the first when null).</summary>
    public static string Instance(Guid id, string? history, string? signals) => WithQuery(Instance(id), ("history", history), ("signals", signals));

    /// <summary>The subscription list at the page after <paramref name="after"/> (the first when null).</summary>
    public static string SubscriptionList(string? after) => WithQuery(Subscriptions, ("after", after));

    public static string Subscription(Guid id) => $"{Subscriptions}/{id}";

    /// <summary>The schedule list at the page after <paramref name="after"/> (the first when null).</summary>
    public static string ScheduleList(string? after) => WithQuery(Schedules, ("after", after));

    public static string Schedule(Guid id) => $"{Schedules}/{id}";

    /// <summary>A subscription's delivery log at the page after <paramref name="after"/> (the newest when null).</summary>
    public static string Deliveries(Guid id, string? after = null) => WithQuery($"{Subscription(id)}/deliveries", ("after", after));

    public static string Definition(string name, int? version = null, int? compare = null, string? versions = null) =>
        WithQuery($"{Definitions}/{Uri.EscapeDataString(name)}", ("version", version?.ToString(CultureInfo.InvariantCulture)),
            ("compare", compare?.ToString(CultureInfo.InvariantCulture)), ("versions", versions));

    private static string WithQuery(string path, params (string Name, string? Value)[] parameters)
    {
        var query = string.Join('&', parameters.Where(p => p.Value is not null).Select(p => $"{p.Name}={Uri.EscapeDataString(p.Value!)}"));
        return query.Length == 0 ? path : $"{path}?{query}";
    }

    /// <summary>A return address the console may redirect to: one of its own pages, never another site.</summary>
    public static bool IsLocal(string? address) =>
        address is { Length: > 0 and <= 2048 } && address.StartsWith(Root.Value!, StringComparison.Ordinal)
        && address.All(c => c is > ' ' and <= '~')
        && !address.Contains('\\', StringComparison.Ordinal) && (address.Length == Root.Value!.Length || address[Root.Value!.Length] is '/' or '?');
}
