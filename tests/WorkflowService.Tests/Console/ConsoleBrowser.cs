using Microsoft.Playwright;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Console;

/// <summary>
/// One service node (a separate process on the embedded store, with authentication on) and Debian's Chromium driven by
/// Playwright through its executable path: no browser is downloaded. Without Chromium the tests end skipped with the
/// reason, or failed where CI requires the tool (WORKFLOW_TESTS_REQUIRE_TOOLS=chromium).
/// </summary>
public sealed class ConsoleBrowser : IAsyncLifetime
{
    /// <summary>Set to a folder, the page tour writes a screenshot of every page there (how docs/console/ is made).</summary>
    public const string ScreenshotsVariable = "WORKFLOW_CONSOLE_SCREENSHOTS";

    private IPlaywright? _playwright;
    private IBrowser? _browser;
    private ServiceProcess? _node;

    /// <summary>A caller with the application role only: reads and runs instances, may not operate them.</summary>
    public TestApiKey Application { get; } = TestApiKey.Create("claims-app", "application");

    /// <summary>The console's client id at <see cref="Issuer"/>, which the API trusts too (single sign-on).</summary>
    public const string ClientId = "workflow-console";

    public TestIssuer Issuer { get; private set; } = null!;

    public ServiceProcess Node => _node ?? throw new InvalidOperationException("the node did not start");

    public ApiClient Api { get; private set; } = null!;

    private HttpClient? _http;

    public async ValueTask InitializeAsync()
    {
        var chromium = ExternalTools.OnPath("chromium", "chromium", "install Debian's browser: apt-get install chromium");
        Issuer = await TestIssuer.SharedAsync();
        var settings = new Dictionary<string, string?>(Issuer.Settings)
        {
            [$"Console:OpenIdConnect:ClientId"] = ClientId,
            ["Authentication:ApiKeys:1:Name"] = Application.Name,
            ["Authentication:ApiKeys:1:Hash"] = Application.Hash,
            ["Authentication:ApiKeys:1:Roles:0"] = "application",
            // A failing step is retried quickly, so that a dead letter is made within the test's deadline.
            ["Workers:ErrorBackoff"] = "00:00:00.200",
        };
        _node = await TestServiceProcess.StartAsync("console-node", settings);
        _http = _node.CreateClient();
        Api = new ApiClient(_http);
        _playwright = await Playwright.CreateAsync();
        _browser = await _playwright.Chromium.LaunchAsync(new BrowserTypeLaunchOptions
        {
            ExecutablePath = chromium,
            Headless = true,
            // The sandbox needs user namespaces, which a container running as root does not give.
            Args = ["--no-sandbox"],
        });
    }

    /// <summary>A fresh browser context (its own cookies) at 1280 × 860, a laptop's screen.</summary>
    public async Task<ConsolePage> OpenAsync()
    {
        var context = await _browser!.NewContextAsync(new BrowserNewContextOptions
        {
            BaseURL = Node.Address.ToString().TrimEnd('/'),
            ViewportSize = new ViewportSize { Width = 1280, Height = 860 },
            Locale = "en-GB",
        });
        context.SetDefaultTimeout(20_000);
        return new ConsolePage(context, await context.NewPageAsync());
    }

    public async ValueTask DisposeAsync()
    {
        if (_browser is not null)
        {
            await _browser.DisposeAsync();
        }

        _playwright?.Dispose();
        _http?.Dispose();
        if (_node is not null)
        {
            await _node.DisposeAsync();
        }
    }
}

/// <summary>A page of the console in its own browser context, with every console error and uncaught exception it logs.</summary>
public sealed class ConsolePage : IAsyncDisposable
{
    private readonly List<string> _errors = [];

    public ConsolePage(IBrowserContext context, IPage page)
    {
        Context = context;
        Page = page;
        page.Console += (_, message) =>
        {
            if (message.Type is "error" or "warning")
            {
                lock (_errors)
                {
                    _errors.Add($"{message.Type}: {message.Text} ({page.Url})");
                }
            }
        };
        page.PageError += (_, error) =>
        {
            lock (_errors)
            {
                _errors.Add($"uncaught: {error} ({page.Url})");
            }
        };
    }

    public IBrowserContext Context { get; }

    public IPage Page { get; }

    /// <summary>What the browser logged as an error or warning so far (a blocked script or style shows here too).</summary>
    public IReadOnlyList<string> Errors
    {
        get
        {
            lock (_errors)
            {
                return [.. _errors];
            }
        }
    }

    public async Task SignInAsync(string key)
    {
        await Page.GotoAsync("/console");
        await Assertions.Expect(Page).ToHaveURLAsync(new System.Text.RegularExpressions.Regex("/console/sign-in"));
        await Page.GetByLabel("API key or access token").Or(Page.GetByLabel("API key", new() { Exact = true })).FillAsync(key);
        await Page.GetByRole(AriaRole.Button, new() { Name = "Sign in" }).ClickAsync();
    }

    public async ValueTask DisposeAsync() => await Context.DisposeAsync();
}
