using System.Text.RegularExpressions;
using WorkflowService.Engine.Expressions;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Engine.Definitions;

/// <summary>Compiles a definition's <c>searchAttributes</c>: names a filter can write, known types, expressions that parse.</summary>
internal static partial class SearchAttributeCompilation
{
    [GeneratedRegex("^[A-Za-z][A-Za-z0-9_]{0,63}$")]
    private static partial Regex NamePattern();

    public static List<SearchAttribute> Compile(Dictionary<string, SearchAttributeDocument?>? declared, ExpressionRuntime expressions,
        List<Diagnostic> diagnostics)
    {
        var compiled = new List<SearchAttribute>();
        foreach (var (name, attribute) in declared ?? [])
        {
            var path = $"$.searchAttributes.{name}";
            if (!NamePattern().IsMatch(name))
            {
                diagnostics.Add(new Diagnostic(path, $"'{name}' is not a valid search attribute name: 1-64 letters, digits or '_', starting with a letter"));
                continue;
            }

            if (TenantSearchFields.IsBuiltIn(name) || SearchQuery.IsReservedWord(name))
            {
                diagnostics.Add(new Diagnostic(path, $"'{name}' is reserved: it is an instance field or a word of the filter language"));
                continue;
            }

            if (attribute is null)
            {
                diagnostics.Add(new Diagnostic(path, "a search attribute is an object with a type and a value"));
                continue;
            }

            if (!SearchTypeNames.TryParse(attribute.Type, out var type))
            {
                diagnostics.Add(new Diagnostic($"{path}.type", $"type must be one of: {SearchTypeNames.All}"));
            }

            CompiledExpression? value = null;
            if (string.IsNullOrWhiteSpace(attribute.Value))
            {
                diagnostics.Add(new Diagnostic($"{path}.value", "value is required: the expression that sets the attribute"));
            }
            else
            {
                try
                {
                    value = expressions.Compile(attribute.Value);
                    if (value.Secrets.Count > 0)
                    {
                        diagnostics.Add(new Diagnostic($"{path}.value", "secret() can be used only in an http step's url, headers and body"));
                        value = null;
                    }
                }
                catch (ExpressionSyntaxException e)
                {
                    diagnostics.Add(new Diagnostic($"{path}.value", $"invalid expression: {e.Message}"));
                }
            }

            if (value is not null && SearchTypeNames.TryParse(attribute.Type, out _))
            {
                compiled.Add(new SearchAttribute(name, type, value));
            }
        }

        return compiled;
    }

    /// <summary>The declaration as the canonical document writes it; null when there is none.</summary>
    public static Dictionary<string, SearchAttributeDocument?>? Decompile(IReadOnlyList<SearchAttribute> attributes) =>
        attributes.Count == 0
            ? null
            : attributes.ToDictionary(a => a.Name, a => (SearchAttributeDocument?)new SearchAttributeDocument { Type = SearchTypeNames.Of(a.Type), Value = a.Value.Source },
                StringComparer.Ordinal);
}
