using System.Text;
using WorkflowService.Engine.Search.Query;
using static WorkflowService.UnitTests.Search.SearchTestFields;

namespace WorkflowService.UnitTests.Search;

/// <summary>
/// Random trees in the form the parser gives (no and directly in and, no or directly in or) written canonically parse
/// back to equal trees, and their canonical text is a fixed point. Seeded, so a failure repeats.
/// </summary>
public sealed class SearchCanonicalRoundTripTests
{
    private static readonly SearchQueryOptions Roomy = new() { MaxPredicates = 1024, MaxLength = 65_536 };

    private static readonly SearchField[] Fields = [Amount, Region, Customer, Status, SubmittedAt, Notes, Urgent];

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    public void Random_filters_round_trip_through_their_canonical_text(int seed)
    {
        var random = new Random(seed);
        for (var i = 0; i < 250; i++)
        {
            var filter = Filter(random, depth: 4);
            var canonical = SearchQuery.Canonical(filter);
            var parsed = SearchQuery.ParseFilter(canonical, Catalog, Roomy);
            Assert.True(parsed.Succeeded, $"{canonical}: {parsed.Error?.Message}");
            Assert.True(filter.Equals(parsed.Value), $"{canonical} parsed as {parsed.Value}");
            Assert.Equal(canonical, parsed.Value.ToString());
        }
    }

    [Fact]
    public void Random_orders_round_trip_through_their_canonical_text()
    {
        var random = new Random(5);
        var sortable = Fields.Where(f => f.Type != SearchValueType.Text).ToArray();
        for (var i = 0; i < 100; i++)
        {
            var order = sortable.OrderBy(_ => random.Next()).Take(random.Next(1, 5))
                .Select(f => new SearchOrder(f, random.Next(2) == 0)).ToList();
            var parsed = SearchQuery.ParseOrder(SearchQuery.Canonical(order), Catalog);
            Assert.Equal(order, parsed.Value);
        }
    }

    private static SearchFilter Filter(Random random, int depth, Type? parent = null)
    {
        var kind = depth == 0 ? 0 : random.Next(4);
        if (kind == 1 && parent != typeof(AndFilter))
        {
            return new AndFilter(Items(random, depth, typeof(AndFilter)));
        }

        if (kind == 2 && parent != typeof(OrFilter))
        {
            return new OrFilter(Items(random, depth, typeof(OrFilter)));
        }

        return kind == 3 ? new NotFilter(Filter(random, depth - 1)) : Predicate(random);
    }

    private static List<SearchFilter> Items(Random random, int depth, Type parent) =>
        [.. Enumerable.Range(0, random.Next(2, 4)).Select(_ => Filter(random, depth - 1, parent))];

    private static SearchFilter Predicate(Random random)
    {
        var field = Fields[random.Next(Fields.Length)];
        var choice = random.Next(8);
        return field.Type switch
        {
            SearchValueType.Text => choice < 4
                ? new ComparisonFilter(field, ComparisonOperator.Equal, $"{Word(random)} {Word(random)}")
                : new PrefixFilter(field, Word(random)),
            SearchValueType.Bool => new ComparisonFilter(field, choice < 4 ? ComparisonOperator.Equal : ComparisonOperator.NotEqual, choice % 2 == 0),
            _ when choice == 6 => new InFilter(field, [.. Enumerable.Range(0, random.Next(1, 4)).Select(_ => Value(random, field.Type))]),
            SearchValueType.Keyword when choice == 7 => new PrefixFilter(field, Keyword(random, minLength: 1)),
            _ => new ComparisonFilter(field, (ComparisonOperator)(choice % 6), Value(random, field.Type)),
        };
    }

    private static object Value(Random random, SearchValueType type) => type switch
    {
        SearchValueType.Number => new decimal(random.Next(), random.Next(), random.Next(3) == 0 ? random.Next() : 0, random.Next(2) == 0, (byte)random.Next(29)),
        SearchValueType.DateTime => new DateTimeOffset(
            new DateTime(1900, 1, 1).AddTicks((long)(random.NextDouble() * TimeSpan.FromDays(365 * 200).Ticks)),
            TimeSpan.FromMinutes(random.Next(-14 * 60, 14 * 60 + 1))),
        _ => Keyword(random, minLength: 0),
    };

    private static string Keyword(Random random, int minLength)
    {
        string[] alphabet = ["a", "Z", "0", "9", " ", "-", "_", "\"", "\\", "é", "中", "😀", "(", ")", "=", "<", ",", "'"];
        var text = new StringBuilder();
        for (var i = random.Next(minLength, 8); i > 0; i--)
        {
            text.Append(alphabet[random.Next(alphabet.Length)]);
        }

        return text.ToString();
    }

    private static string Word(Random random) => new[] { "broken", "Screen", "größe", "42", "x7" }[random.Next(5)];
}
