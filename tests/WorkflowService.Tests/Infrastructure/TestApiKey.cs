using System.Security.Cryptography;
using System.Text;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>A fresh random API key for a test: the key the client sends, and the settings (its hash, never the key) the service reads.</summary>
public sealed record TestApiKey(string Name, string Key, IReadOnlyList<string> Roles, string? Tenant = null)
{
    public static TestApiKey Create(string name, params string[] roles) =>
        new(name, Convert.ToBase64String(RandomNumberGenerator.GetBytes(32)), roles);

    /// <summary>A key whose caller is in <paramref name="tenant"/>.</summary>
    public static TestApiKey ForTenant(string tenant, string name, params string[] roles) => Create(name, roles) with { Tenant = tenant };

    public string Hash => Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(Key)));

    /// <summary>The settings of keys <paramref name="keys"/> as Authentication:ApiKeys:i:….</summary>
    public static Dictionary<string, string?> Settings(params TestApiKey[] keys)
    {
        var settings = new Dictionary<string, string?>();
        for (var i = 0; i < keys.Length; i++)
        {
            settings[$"Authentication:ApiKeys:{i}:Name"] = keys[i].Name;
            settings[$"Authentication:ApiKeys:{i}:Hash"] = keys[i].Hash;
            if (keys[i].Tenant is { } tenant)
            {
                settings[$"Authentication:ApiKeys:{i}:Tenant"] = tenant;
            }

            for (var r = 0; r < keys[i].Roles.Count; r++)
            {
                settings[$"Authentication:ApiKeys:{i}:Roles:{r}"] = keys[i].Roles[r];
            }
        }

        return settings;
    }
}
