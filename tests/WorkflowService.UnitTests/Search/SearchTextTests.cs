using WorkflowService.Engine.Search.Query;

namespace WorkflowService.UnitTests.Search;

/// <summary>The words a text attribute is indexed and matched by.</summary>
public sealed class SearchTextTests
{
    [Theory]
    [InlineData("Broken screen, broken CASE!", new[] { "broken", "screen", "case" })]
    [InlineData("order-42/item_7", new[] { "order", "42", "item", "7" })]
    [InlineData("Größe Ölkanne", new[] { "größe", "ölkanne" })]
    [InlineData("𝐀bc 😀 x", new[] { "𝐀bc", "x" })]
    [InlineData(" -- ", new string[0])]
    public void Words_are_runs_of_letters_and_digits_lower_cased_once_each(string text, string[] words) =>
        Assert.Equal(words, SearchText.Words(text));

    [Theory]
    [InlineData("scr", true)]
    [InlineData("Größe42", true)]
    [InlineData("scr een", false)]
    [InlineData("scr-", false)]
    [InlineData("", false)]
    public void One_word_is_letters_and_digits_only(string text, bool oneWord) => Assert.Equal(oneWord, SearchText.IsOneWord(text));
}
