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

    public static string Instance(Guid id) => $"{Instances}/{id}";

    public static string Definition(string name, int? version = null, int? compare = null) =>
        $"{Definitions}/{Uri.EscapeDataString(name)}"
        + (version is { } v ? $"?version={v}" : "")
        + (compare is { } c ? $"{(version is null ? '?' : '&')}compare={c}" : "");

    /// <summary>A return address the console may redirect to: one of its own pages, never another site.</summary>
    public static bool IsLocal(string? address) =>
        address is { Length: > 0 and <= 2048 } && address.StartsWith(Root.Value!, StringComparison.Ordinal)
        && address.All(c => c is > ' ' and <= '~')
        && !address.Contains('\\', StringComparison.Ordinal) && (address.Length == Root.Value!.Length || address[Root.Value!.Length] is '/' or '?');
}
