using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.UnitTests.Compilation;

/// <summary>A definition's searchAttributes: what the compiler accepts, what it refuses and where, and the decompiler's round trip.</summary>
public sealed class SearchAttributeCompilationTests
{
    private const string Wait = """{ "id": "w", "type": "waitForSignal", "signal": "go", "next": "end" }, { "id": "end", "type": "complete" }""";

    private static string With(string attributes) => $$"""{ "name": "t", "searchAttributes": {{attributes}}, "steps": [ {{Wait}} ] }""";

    [Fact]
    public void Each_type_compiles_with_its_expression_in_declaration_order()
    {
        var definition = CompilerFixture.Valid(With("""
            { "region": { "type": "keyword", "value": "vars.region" }, "note": { "type": "text", "value": "vars.note" },
              "amount": { "type": "number", "value": "vars.order.amount * 2" }, "submittedAt": { "type": "datetime", "value": "input.at" },
              "urgent": { "type": "bool", "value": "vars.amount > 10" } }
            """));

        Assert.Equal(
            [("region", SearchValueType.Keyword, "vars.region"), ("note", SearchValueType.Text, "vars.note"),
                ("amount", SearchValueType.Number, "vars.order.amount * 2"), ("submittedAt", SearchValueType.DateTime, "input.at"),
                ("urgent", SearchValueType.Bool, "vars.amount > 10")],
            definition.SearchAttributes.Select(a => (a.Name, a.Type, a.Value.Source)));
    }

    [Fact]
    public void The_decompiler_writes_the_declaration_back_and_it_compiles_to_the_same_text()
    {
        var definition = CompilerFixture.Valid(With("""{ "region": { "type": "keyword", "value": "vars.region" }, "amount": { "type": "number", "value": "vars.amount" } }"""));

        Assert.Contains("""
            "searchAttributes":{"region":{"type":"keyword","value":"vars.region"},"amount":{"type":"number","value":"vars.amount"}}
            """.Trim(), definition.Json, StringComparison.Ordinal);
        Assert.Equal(definition.Json, CompilerFixture.Valid(definition.Json).Json);
    }

    [Fact]
    public void A_definition_without_attributes_has_none_and_writes_none()
    {
        var definition = CompilerFixture.Valid($$"""{ "name": "t", "steps": [ {{Wait}} ] }""");

        Assert.Empty(definition.SearchAttributes);
        Assert.DoesNotContain("searchAttributes", definition.Json, StringComparison.Ordinal);
    }

    [Fact]
    public void Bad_names_types_and_expressions_are_refused_at_their_paths()
    {
        CompilerFixture.Refused(With("""
            { "1st": { "type": "keyword", "value": "vars.a" }, "status": { "type": "keyword", "value": "vars.a" },
              "and": { "type": "bool", "value": "true" }, "region": { "type": "string", "value": "vars.a" },
              "amount": { "type": "number", "value": "vars.a +" }, "note": { "type": "text" }, "odd": null,
              "key": { "type": "keyword", "value": "secret('k')" } }
            """),
            ("$.searchAttributes.1st", "'1st' is not a valid search attribute name: 1-64 letters, digits or '_', starting with a letter"),
            ("$.searchAttributes.status", "'status' is reserved: it is an instance field or a word of the filter language"),
            ("$.searchAttributes.and", "'and' is reserved: it is an instance field or a word of the filter language"),
            ("$.searchAttributes.region.type", "type must be one of: keyword, text, number, datetime, bool"),
            ("$.searchAttributes.amount.value", ExpressionProblem("vars.a +")),
            ("$.searchAttributes.note.value", "value is required: the expression that sets the attribute"),
            ("$.searchAttributes.odd", "a search attribute is an object with a type and a value"),
            ("$.searchAttributes.key.value", "secret() can be used only in an http step's url, headers and body"));
    }

    /// <summary>The compiler's words for an expression that does not parse (the parser's own message).</summary>
    private static string ExpressionProblem(string source)
    {
        var (_, diagnostics) = CompilerFixture.Compile(CompilerFixture.Steps($$"""{ "id": "a", "type": "assign", "set": { "x": "{{source}}" } }""", """{ "id": "b", "type": "complete" }"""));
        return Assert.Single(diagnostics).Message;
    }
}
