namespace WorkflowService.Hosting;

/// <summary>
/// The "OpenApi:License" subsection: a name (none: the document states no licence), and an SPDX identifier or a URL
/// (OpenAPI 3.1 allows one of them; a URL, when set, is stated instead of the identifier).
/// </summary>
public sealed class ApiDocumentLicense
{
    public string? Name { get; set; }

    /// <summary>An SPDX licence expression such as Apache-2.0 or MIT.</summary>
    public string? Identifier { get; set; }

    /// <summary>An absolute http(s) URL of the licence text.</summary>
    public Uri? Url { get; set; }
}
