using System.Collections.Concurrent;
using System.Net;
using System.Text.RegularExpressions;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Mvc.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Serilog.Core;
using Serilog.Events;
using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Security;

/// <summary>
/// Issue #36: an http step names a secret (<c>secret('billing-api')</c>); the node puts its value into the request as it
/// is sent, and the value appears in no API answer, history event, log line or console page: each is searched for it.
/// </summary>
public sealed partial class CallOutSecretTests : ServiceTest<SqliteBackend>
{
    private const string SecretValue = "sk_live_Zq8+7/ValueThatMustNeverShow";
    private static readonly TestApiKey Operator = TestApiKey.Create("night-shift", "operator", "application", "designer");

    protected override bool UsesDefaultService => false;

    [Fact]
    public async Task A_secret_reaches_the_called_server_and_no_answer_history_event_log_line_or_console_page()
    {
        await using var target = await Receiver.StartAsync();
        var logs = new CapturedLogs();
        var (factory, _) = await StartServiceAsync(new(TestApiKey.Settings(Operator))
        {
            ["CallOuts:Secrets:billing-api"] = SecretValue,
            ["Serilog:MinimumLevel:Default"] = "Verbose",
        }, services => services.AddSingleton<ILogEventSink>(logs));
        var api = OperatorApi(factory);
        var name = Definitions.Unique("secret");
        await api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "bill", "type": "http", "method": "POST",
                  "url": "'{{target.Address}}charge?key=' + secret('billing-api') + '&claim=' + input.claim",
                  "headers": { "Authorization": "'Bearer ' + secret('billing-api')", "X-Claim": "input.claim" },
                  "body": "({ claim: input.claim, token: secret('billing-api') })",
                  "output": "charged" },
                { "id": "done", "type": "complete", "result": "vars.charged.body" }
              ]
            }
            """);

        var instance = await api.StartAsync(name, new { claim = "C-1" });
        var done = await api.WaitForAsync(instance.Id, InstanceStatus.Completed);

        // The value was sent, in each place the definition put it.
        var received = Assert.Single(target.Requests);
        Assert.Equal($"Bearer {SecretValue}", received.Authorization);
        Assert.Equal(SecretValue, received.Key);
        Assert.Contains($"\"token\":\"{SecretValue.Replace("+", "\\u002B", StringComparison.Ordinal)}\"", received.Body, StringComparison.Ordinal);

        // ...and is shown nowhere.
        using var browser = factory.CreateClient(new WebApplicationFactoryClientOptions
        {
            BaseAddress = new Uri("https://localhost"), AllowAutoRedirect = false, HandleCookies = true,
        });
        await SignInAsync(browser, Operator.Key);
        var shown = new Dictionary<string, string>
        {
            ["instance"] = await api.Http.GetStringAsync($"/instances/{instance.Id}"),
            ["history"] = await api.Http.GetStringAsync($"/instances/{instance.Id}/history"),
            ["instance signals"] = await api.Http.GetStringAsync($"/instances/{instance.Id}/signals"),
            ["signals"] = await api.Http.GetStringAsync($"/signals?instanceId={instance.Id}"),
            ["console instance"] = await browser.GetStringAsync($"/console/instances/{instance.Id}"),
            ["console instances"] = await browser.GetStringAsync("/console/instances"),
            ["log"] = string.Join('\n', logs.Lines),
        };
        Assert.True(!logs.Lines.IsEmpty, "the log captured nothing: the search below would prove nothing");
        foreach (var (where, text) in shown)
        {
            Assert.DoesNotContain(SecretValue, text, StringComparison.Ordinal);
            Assert.DoesNotContain(Uri.EscapeDataString(SecretValue), text, StringComparison.Ordinal);
            Assert.DoesNotContain("ValueThatMustNeverShow", text, StringComparison.Ordinal);
            Assert.True(!text.Contains("claim=C-1", StringComparison.Ordinal), $"{where} shows the query string");
        }

        // What readers see instead: the header hidden, the query's values hidden, the secret by name.
        Assert.Contains("charge?key=***\\u0026claim=***", shown["history"].Replace("&", "\\u0026", StringComparison.Ordinal), StringComparison.Ordinal);
        Assert.Contains("\"Authorization\":\"***\"", shown["instance signals"], StringComparison.Ordinal);
        Assert.Contains("{{secret:billing-api}}", shown["instance signals"], StringComparison.Ordinal);
        Assert.Equal(InstanceStatus.Completed, done.Status);
    }

    [Fact]
    public async Task A_secret_that_is_not_configured_or_is_put_in_the_path_fails_the_step_with_the_reason()
    {
        await using var target = await Receiver.StartAsync();
        var (factory, _) = await StartServiceAsync(new(TestApiKey.Settings(Operator))
        {
            ["CallOuts:Secrets:billing-api"] = SecretValue,
            ["Engine:MaxAttempts"] = "1",
        });
        var api = OperatorApi(factory);

        var missing = await RunAsync(api, $"'{target.Address}charge?key=' + secret('ledger-api')");
        var inPath = await RunAsync(api, $"'{target.Address}' + secret('billing-api') + '/charge'");

        Assert.Contains("the secret 'ledger-api' is not configured (CallOuts:Secrets:ledger-api)", missing, StringComparison.Ordinal);
        Assert.Contains("a secret may be sent in headers, the body or the query string, not in the URL's host or path", inPath, StringComparison.Ordinal);
        Assert.DoesNotContain(SecretValue, inPath, StringComparison.Ordinal);
        Assert.Empty(target.Requests);
    }

    [Theory]
    [InlineData("assign", """{ "id": "s", "type": "assign", "set": { "k": "secret('billing-api')" } }""", "$.steps[0].set.k")]
    [InlineData("a name from data", """{ "id": "s", "type": "http", "method": "GET", "url": "'https://x.example/?k=' + secret(input.which)" }""", "$.steps[0].url")]
    [InlineData("passed around", """{ "id": "s", "type": "http", "method": "GET", "url": "[1].map(secret)[0]" }""", "$.steps[0].url")]
    public async Task A_definition_that_uses_secret_outside_a_call_out_or_with_a_name_from_data_is_refused(string why, string step, string path)
    {
        var (factory, _) = await StartServiceAsync(TestApiKey.Settings(Operator));
        using var response = await OperatorApi(factory).Http.PostAsync("/definitions", new StringContent($$"""
            { "name": "{{Definitions.Unique("secret")}}", "steps": [ {{step}}, { "id": "done", "type": "complete" } ] }
            """, System.Text.Encoding.UTF8, "application/json"));

        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.UnprocessableEntity);
        Assert.True(problem.ToString().Contains(path, StringComparison.Ordinal), $"{why}: {problem}");
        Assert.Contains("secret", problem.ToString(), StringComparison.Ordinal);
    }

    private static async Task<string> RunAsync(ApiClient api, string url)
    {
        var name = Definitions.Unique("secret");
        await api.PublishAsync($$"""
            { "name": "{{name}}", "steps": [
                { "id": "bill", "type": "http", "method": "GET", "url": {{System.Text.Json.JsonSerializer.Serialize(url)}}, "retries": 0 },
                { "id": "done", "type": "complete" } ] }
            """);
        var instance = await api.StartAsync(name);
        return (await api.WaitForAsync(instance.Id, InstanceStatus.Faulted)).Error!;
    }

    private static ApiClient OperatorApi(WorkflowServiceFactory factory)
    {
        var client = factory.CreateClient();
        client.DefaultRequestHeaders.Add("X-Api-Key", Operator.Key);
        return new ApiClient(client);
    }

    private static async Task SignInAsync(HttpClient browser, string credential)
    {
        var form = await browser.GetStringAsync("/console/sign-in");
        using var response = await browser.PostAsync("/console/sign-in", new FormUrlEncodedContent(
            [new("__antiforgery", AntiforgeryField().Match(form).Groups[1].Value), new("credential", credential), new("returnUrl", "/console/instances")]));
        Assert.Equal(HttpStatusCode.Redirect, response.StatusCode);
    }

    [GeneratedRegex("name=\"__antiforgery\" value=\"([^\"]+)\"")]
    private static partial Regex AntiforgeryField();

    /// <summary>Every event the service logs, rendered with its properties and exception.</summary>
    private sealed class CapturedLogs : ILogEventSink
    {
        private readonly ConcurrentQueue<string> _lines = new();

        public ConcurrentQueue<string> Lines => _lines;

        public void Emit(LogEvent logEvent) => _lines.Enqueue(
            $"{logEvent.RenderMessage(System.Globalization.CultureInfo.InvariantCulture)} {string.Join(' ', logEvent.Properties.Select(p => $"{p.Key}={p.Value}"))} {logEvent.Exception}");
    }

    /// <summary>A server on loopback that records what each call-out sent it and answers 200.</summary>
    private sealed class Receiver : IAsyncDisposable
    {
        private readonly WebApplication _app;

        private Receiver(WebApplication app) => _app = app;

        public sealed record Received(string? Authorization, string? Key, string Body);

        public ConcurrentQueue<Received> Requests { get; } = new();

        public Uri Address { get; private set; } = null!;

        public static async Task<Receiver> StartAsync()
        {
            var builder = WebApplication.CreateSlimBuilder();
            builder.WebHost.UseUrls("http://127.0.0.1:0");
            builder.Logging.ClearProviders();
            var app = builder.Build();
            var receiver = new Receiver(app);
            app.Map("/{**path}", async (HttpRequest request) =>
            {
                using var reader = new StreamReader(request.Body);
                receiver.Requests.Enqueue(new(request.Headers.Authorization.ToString(), request.Query["key"].ToString(), await reader.ReadToEndAsync()));
                return Results.Json(new { charged = true });
            });
            await app.StartAsync();
            receiver.Address = new Uri(app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First());
            return receiver;
        }

        public async ValueTask DisposeAsync()
        {
            await _app.StopAsync();
            await _app.DisposeAsync();
        }
    }
}
