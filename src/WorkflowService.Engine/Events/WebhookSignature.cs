using System.Security.Cryptography;
using System.Text;

namespace WorkflowService.Engine.Events;

/// <summary>
/// The Standard Webhooks signature: HMAC-SHA256 over <c>{webhook-id}.{webhook-timestamp}.{body}</c> with the secret's key,
/// base64, as <c>v1,&lt;signature&gt;</c>; during a rotation's overlap one per secret, separated by spaces, so a receiver
/// holding either secret verifies it.
/// </summary>
public static class WebhookSignature
{
    public const string IdHeader = "webhook-id";
    public const string TimestampHeader = "webhook-timestamp";
    public const string SignatureHeader = "webhook-signature";

    public static string Sign(string id, long timestamp, string body, IEnumerable<string> secrets)
    {
        ArgumentNullException.ThrowIfNull(secrets);
        var content = Encoding.UTF8.GetBytes($"{id}.{timestamp.ToString(System.Globalization.CultureInfo.InvariantCulture)}.{body}");
        return string.Join(' ', secrets.Select(secret => "v1," + Convert.ToBase64String(HMACSHA256.HashData(SigningSecret.KeyOf(secret), content))));
    }
}
