using System.Security.Cryptography;
using System.Text;

namespace WorkflowService.Testing;

/// <summary>
/// The run's API key: random per run, never written anywhere. The service gets only its SHA-256 (as a deployed node
/// would, through Authentication__ApiKeys__0__*), the client sends the key in X-Api-Key on every request.
/// </summary>
internal sealed record BenchApiKey(string Name, string Key, string Role)
{
    /// <summary>A second role the key carries: a role tasks are assigned to (none when null).</summary>
    public string? TaskRole { get; init; }

    public const string HeaderName = "X-Api-Key";

    /// <summary>
    /// The runner's key: 32 random bytes (base64), role admin (every service role) and role underwriter, so that it may
    /// also work the human tasks of the insurance scenario's underwriters (a task is completed by its caller).
    /// </summary>
    public static BenchApiKey Create() => Create("benchmark-runner") with { TaskRole = "underwriter" };

    /// <summary>Another caller's key (a second application), role admin.</summary>
    public static BenchApiKey Create(string name) => new(name, Convert.ToBase64String(RandomNumberGenerator.GetBytes(32)), "admin");

    /// <summary>64 lower-case hex characters: SHA-256 over the key's UTF-8 bytes.</summary>
    public string Hash => Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(Key)));

    /// <summary>The service's settings for this key, as environment variables.</summary>
    public IReadOnlyDictionary<string, string> ServiceEnvironment => ServiceEnvironmentAt(0);

    /// <summary>The service's settings for this key as its <paramref name="index"/>th key (Authentication__ApiKeys__i__…).</summary>
    public IReadOnlyDictionary<string, string> ServiceEnvironmentAt(int index)
    {
        var settings = new Dictionary<string, string>
        {
            [$"Authentication__ApiKeys__{index}__Name"] = Name,
            [$"Authentication__ApiKeys__{index}__Hash"] = Hash,
            [$"Authentication__ApiKeys__{index}__Roles__0"] = Role,
        };
        if (TaskRole is not null)
        {
            settings[$"Authentication__ApiKeys__{index}__Roles__1"] = TaskRole;
        }

        return settings;
    }

    /// <summary>Never the key itself (a record's generated ToString would print it).</summary>
    public override string ToString() => $"{Name} (role {Role}, SHA-256 {Hash[..8]}…)";
}
