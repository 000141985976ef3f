using System.Security.Cryptography;

namespace WorkflowService.Engine.Events;

/// <summary>
/// A subscription's signing secret in the Standard Webhooks form: <c>whsec_</c> and the base64 of its random key bytes.
/// Receivers decode the part after the prefix and use it as the HMAC-SHA256 key.
/// </summary>
public static class SigningSecret
{
    public const string Prefix = "whsec_";

    /// <summary>Bytes of key in a new secret (192 bits, within the convention's 24 to 64).</summary>
    public const int KeyBytes = 24;

    public static string Create() => Prefix + Convert.ToBase64String(RandomNumberGenerator.GetBytes(KeyBytes));

    /// <summary>The HMAC key of <paramref name="secret"/>.</summary>
    public static byte[] KeyOf(string secret) => Convert.FromBase64String(secret.StartsWith(Prefix, StringComparison.Ordinal) ? secret[Prefix.Length..] : secret);
}
