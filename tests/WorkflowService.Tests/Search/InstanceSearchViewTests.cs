using System.Text.Json;
using WorkflowService.Api;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Tests.Search;

/// <summary>How an instance's values show in its view: each as JSON writes a value of its type, empty ones left out.</summary>
public sealed class InstanceSearchViewTests
{
    [Fact]
    public void Each_value_shows_as_json_writes_it_and_empty_ones_are_left_out()
    {
        object[] shown =
        [
            "EU", "a \"quoted\" note, ünïcode", 1234.5m, 0.1m, -7m, 1e28m, true, false,
            new DateTime(2026, 11, 1, 10, 0, 0, 123, DateTimeKind.Utc), new DateTime(2026, 11, 1, 10, 0, 0, DateTimeKind.Utc),
        ];
        var values = shown.Select((v, i) => new SearchAttributeValue($"a{i}", SearchValueType.Keyword, v))
            .Append(new SearchAttributeValue("empty", SearchValueType.Number, null))
            .ToList();

        var view = InstanceSearch.View(values)!;

        Assert.Equal(shown.Length, view.Count);
        Assert.False(view.ContainsKey("empty"));
        for (var i = 0; i < shown.Length; i++)
        {
            Assert.Equal(JsonSerializer.SerializeToElement(shown[i]).GetRawText(), view[$"a{i}"].GetRawText());
        }
    }

    [Fact]
    public void No_values_is_no_view_and_only_empty_ones_an_empty_one()
    {
        Assert.Null(InstanceSearch.View(null));
        Assert.Null(InstanceSearch.View([]));
        Assert.Empty(InstanceSearch.View([new SearchAttributeValue("amount", SearchValueType.Number, null)])!);
    }
}
