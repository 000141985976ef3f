using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Expressions;

namespace WorkflowService.UnitTests.Execution;

/// <summary>Secret references (resolved only with the run's nonce) and the redacted forms readers see.</summary>
public sealed class CallOutRedactionTests
{
    private const string Nonce = "0123456789abcdef0123456789abcdef";

    [Theory]
    [InlineData("https://api.example.com/quotes", "https://api.example.com/quotes")]
    [InlineData("https://api.example.com/quotes?key=abc&page=2", "https://api.example.com/quotes?key=***&page=***")]
    [InlineData("https://user:pass@api.example.com/q?x", "https://api.example.com/q?x=***")]
    [InlineData("https://api.example.com/q#frag", "https://api.example.com/q")]
    [InlineData("https://api.example.com/q?k=" + "{{secret:billing-api:" + Nonce + "}}", "https://api.example.com/q?k=***")]
    [InlineData("https://api.example.com/{{secret:billing-api:" + Nonce + "}}/q", "https://api.example.com/{{secret:billing-api}}/q")]
    public void A_url_is_shown_without_user_information_query_values_or_secret_nonces(string url, string shown) =>
        Assert.Equal(shown, CallOutRequest.RedactUrl(url));

    [Fact]
    public void Only_references_with_the_runs_nonce_are_resolved_so_data_cannot_ask_for_a_secret()
    {
        var forged = "{{secret:billing-api:ffffffffffffffffffffffffffffffff}}";
        var text = $"Bearer {SecretReferences.Format("billing-api", Nonce)} {forged}";

        Assert.Equal($"Bearer VALUE {forged}", SecretReferences.Resolve(text, Nonce, name => name == "billing-api" ? "VALUE" : "?"));
        Assert.True(SecretReferences.Refers(text, Nonce));
        Assert.False(SecretReferences.Refers(forged, Nonce));
    }

    [Fact]
    public void The_signal_payload_readers_see_hides_header_values_and_names_secrets()
    {
        var request = new CallOutRequest("POST", "https://api.example.com/charge?key=" + SecretReferences.Format("billing-api", Nonce),
            $$"""{"token":"{{SecretReferences.Format("billing-api", Nonce)}}","claim":"C-1"}""",
            new Dictionary<string, string> { ["Authorization"] = "Bearer " + SecretReferences.Format("billing-api", Nonce) }, 1000, 0, Nonce);

        var shown = CallOutRequest.Redacted(System.Text.Json.JsonSerializer.Serialize(request, WorkflowService.Engine.EngineJson.Options));

        Assert.DoesNotContain(Nonce, shown, StringComparison.Ordinal);
        Assert.Contains("\"Authorization\":\"***\"", shown, StringComparison.Ordinal);
        Assert.Contains("charge?key=***", shown, StringComparison.Ordinal);
        Assert.Contains("{{secret:billing-api}}", shown, StringComparison.Ordinal);
        Assert.Contains("C-1", shown, StringComparison.Ordinal);
    }
}
