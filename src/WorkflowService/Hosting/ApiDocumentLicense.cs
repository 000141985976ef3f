namespace WorkflowService.Hosting;

/// <summary>The "OpenApi:License" subsection: a name, and either an SPDX identifier or a URL (OpenAPI 3.1 allows one of them).</summary>
public sealed class ApiDocumentLicense
{
    public string? Name { get; set; }

    /// <summary>An SPDX licence expression such as Apache-2.0 or MIT.</summary>
    public string? Identifier { get; set; }

    /// <summary>An absolute http(s) URL of the licence text.</summary>
    public Uri? Url { get; set; }
}
