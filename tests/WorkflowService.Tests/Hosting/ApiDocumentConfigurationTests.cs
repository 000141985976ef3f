using System.Net;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using WorkflowService.Hosting;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Hosting;

/// <summary>The "OpenApi" section: the document and the reference page are mapped per environment, and the page calls out to no other host.</summary>
public sealed partial class ApiDocumentConfigurationTests : ServiceTest<SqliteBackend>
{
    protected override bool UsesDefaultService => false;

    /// <summary>The one line a start with these settings ends with, or null when they are right.</summary>
    private static string? StartupMessage(Dictionary<string, string?> settings) =>
        StartupCheck.Message(settings, (services, configuration) => services.AddApiDocument(configuration));

    [Fact]
    public async Task By_default_the_document_and_the_reference_page_are_served()
    {
        var (_, api) = await StartServiceAsync([]);

        using var document = await api.Http.GetAsync("/openapi/v1.json");
        using var page = await api.Http.GetAsync("/scalar/v1");

        Assert.Equal(HttpStatusCode.OK, document.StatusCode);
        Assert.Equal(HttpStatusCode.OK, page.StatusCode);
    }

    [Fact]
    public async Task One_switch_turns_off_the_document_and_the_reference_page()
    {
        var (_, api) = await StartServiceAsync(new() { ["OpenApi:Enabled"] = "false" });

        using var document = await api.Http.GetAsync("/openapi/v1.json");
        using var page = await api.Http.GetAsync("/scalar/v1");

        Assert.Equal(HttpStatusCode.NotFound, document.StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, page.StatusCode);
    }

    [Fact]
    public async Task The_reference_page_can_be_turned_off_alone()
    {
        var (_, api) = await StartServiceAsync(new() { ["OpenApi:ReferencePage"] = "false" });

        using var document = await api.Http.GetAsync("/openapi/v1.json");
        using var page = await api.Http.GetAsync("/scalar/v1");

        Assert.Equal(HttpStatusCode.OK, document.StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, page.StatusCode);
    }

    [Theory]
    [InlineData("OpenApi:Enabled", "yes", "OpenApi:Enabled 'yes' cannot be read; expected true or false.")]
    [InlineData("OpenApi:License:Url", "/licence", "OpenApi:License:Url must be an absolute http(s) URL; got '/licence'.")]
    public void A_wrong_openapi_setting_fails_the_start_with_its_key(string key, string value, string message)
    {
        Assert.Equal(message, StartupMessage(new() { [key] = value }));
    }

    [Fact]
    public async Task A_configured_licence_is_stated_in_the_document()
    {
        var (_, api) = await StartServiceAsync(new() { ["OpenApi:License:Name"] = "Apache License 2.0", ["OpenApi:License:Identifier"] = "Apache-2.0" });

        var info = JsonNode.Parse(await api.Http.GetStringAsync("/openapi/v1.json"))!["info"]!;

        Assert.Equal("Apache License 2.0", (string?)info["license"]?["name"]);
        Assert.Equal("Apache-2.0", (string?)info["license"]?["identifier"]);
    }

    [Fact]
    public async Task A_licence_url_replaces_the_shipped_identifier_and_an_empty_name_states_none()
    {
        // appsettings.json ships Name and Identifier (MIT); an operator sets only what differs.
        var (_, withUrl) = await StartServiceAsync(new() { ["OpenApi:License:Name"] = "Our licence", ["OpenApi:License:Url"] = "https://example.org/licence" });
        var license = JsonNode.Parse(await withUrl.Http.GetStringAsync("/openapi/v1.json"))!["info"]!["license"]!;
        Assert.Equal("https://example.org/licence", (string?)license["url"]);
        Assert.Null(license["identifier"]);

        var (_, without) = await StartServiceAsync(new() { ["OpenApi:License:Name"] = "" });
        Assert.Null(JsonNode.Parse(await without.Http.GetStringAsync("/openapi/v1.json"))!["info"]!["license"]);
    }

    /// <summary>Issue #13: the page fetched its fonts from Scalar's CDN. Everything it loads now comes from this node.</summary>
    [Fact]
    public async Task The_reference_page_loads_nothing_from_another_host()
    {
        var (_, api) = await StartServiceAsync([]);

        var page = await api.Http.GetStringAsync("/scalar/v1");

        Assert.DoesNotMatch(AbsoluteUrl(), page);
        Assert.Contains("\"withDefaultFonts\":false", page, StringComparison.Ordinal);
        Assert.Contains("\"telemetry\":false", page, StringComparison.Ordinal);
        var sources = ScriptSource().Matches(page).Select(m => m.Groups["src"].Value).ToList();
        Assert.NotEmpty(sources);
        foreach (var source in sources)
        {
            // Relative to the page (/scalar/v1): served by this node.
            using var script = await api.Http.GetAsync(new Uri(new Uri(api.Http.BaseAddress!, "/scalar/v1"), source));
            Assert.True(script.StatusCode == HttpStatusCode.OK, $"{source} answered {script.StatusCode}");
        }
    }

    /// <summary>An absolute or protocol-relative URL: a scheme and host, or "//host".</summary>
    [GeneratedRegex(@"(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}", RegexOptions.IgnoreCase)]
    private static partial Regex AbsoluteUrl();

    [GeneratedRegex("""<script[^>]*\bsrc="(?<src>[^"]+)"|from\s+'(?<src>[^']+)'""")]
    private static partial Regex ScriptSource();
}
