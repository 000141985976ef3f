namespace WorkflowService.Tests.Infrastructure;

/// <summary>An answer to bad input speaks of the JSON and query string the client sent, never of the service's .NET types.</summary>
public static class ClientTerms
{
    private static readonly string[] Leaks =
    [
        "WorkflowService.", "System.", "Microsoft.", "Nullable", "`1", "`2", "   at ", ".NET", "Int32", "Int64", "String", "Boolean",
        "JsonObject", "JsonElement", "Document",
    ];

    /// <summary>Asserts that <paramref name="body"/> names no .NET namespace, type or stack frame.</summary>
    public static void AssertNoDotNetNames(string body)
    {
        foreach (var leak in Leaks)
        {
            Assert.DoesNotContain(leak, body, StringComparison.Ordinal);
        }
    }
}
