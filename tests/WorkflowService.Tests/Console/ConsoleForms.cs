using System.Net;
using System.Text.RegularExpressions;
using Microsoft.AspNetCore.Mvc.Testing;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Console;

/// <summary>The console as a browser without a browser meets it: a client that keeps cookies, the sign-in form, and each form's antiforgery token.</summary>
internal static partial class ConsoleForms
{
    /// <summary>A client that keeps the console's cookies and does not follow redirects (a test reads where each answer sends it).</summary>
    public static HttpClient Browser(WorkflowServiceFactory factory) =>
        factory.CreateClient(new WebApplicationFactoryClientOptions { AllowAutoRedirect = false, HandleCookies = true });

    /// <summary>Signs in as a browser does; returns the session cookie it was given (name=value).</summary>
    public static async Task<string> SignInAsync(HttpClient browser, string credential)
    {
        var form = await browser.GetStringAsync("/console/sign-in");
        using var response = await browser.PostAsync("/console/sign-in", new FormUrlEncodedContent(
            [new("__antiforgery", Token(form)), new("credential", credential), new("returnUrl", "/console/instances")]));
        Assert.Equal(HttpStatusCode.Redirect, response.StatusCode);
        return string.Join("; ", response.Headers.GetValues("Set-Cookie").Where(c => c.StartsWith("workflow-console", StringComparison.Ordinal))
            .Select(c => c.Split(';')[0]));
    }

    /// <summary>The antiforgery token of the first form on <paramref name="page"/>.</summary>
    public static string Token(string page) => AntiforgeryField().Match(page) is { Success: true } match
        ? match.Groups[1].Value
        : throw new InvalidOperationException("the page has no antiforgery field");

    [GeneratedRegex("name=\"__antiforgery\" value=\"([^\"]+)\"")]
    private static partial Regex AntiforgeryField();
}
