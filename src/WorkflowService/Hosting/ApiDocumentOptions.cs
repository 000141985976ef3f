using Microsoft.Extensions.Options;

namespace WorkflowService.Hosting;

/// <summary>
/// Whether this node serves its OpenAPI document (/openapi/v1.json) and the reference page for people (/scalar/v1), and
/// the licence the document states ("OpenApi" section). Both are on by default: the document says nothing a caller could
/// not learn by calling, every operation still needs its credentials, and generated clients and the reference page are
/// how people meet the API. An operator who publishes the document elsewhere turns them off per environment.
/// </summary>
public sealed class ApiDocumentOptions
{
    public const string Section = "OpenApi";

    /// <summary>Serve the OpenAPI document at /openapi/v1.json, and with it the reference page (default true); false turns both off.</summary>
    public bool Enabled { get; set; } = true;

    /// <summary>Serve the reference page at /scalar/v1 (default true); it reads the document, so it is served only with <see cref="Enabled"/>.</summary>
    public bool ReferencePage { get; set; } = true;

    /// <summary>The licence the document's info states; none when <see cref="ApiDocumentLicense.Name"/> is empty.</summary>
    public ApiDocumentLicense License { get; set; } = new();

    /// <summary>What is wrong with these settings, each naming its key; empty when nothing is.</summary>
    public IEnumerable<string> Problems()
    {
        if (License.Url is { } url && !(url.IsAbsoluteUri && url.Scheme is "https" or "http"))
        {
            yield return $"{Section}:License:Url must be an absolute http(s) URL; got '{License.Url}'.";
        }
    }

    /// <summary>Fails the start with every problem of the section, each naming its key.</summary>
    internal sealed class Validator : IValidateOptions<ApiDocumentOptions>
    {
        public ValidateOptionsResult Validate(string? name, ApiDocumentOptions options) =>
            options.Problems().ToList() is { Count: > 0 } problems ? ValidateOptionsResult.Fail(problems) : ValidateOptionsResult.Success;
    }
}
