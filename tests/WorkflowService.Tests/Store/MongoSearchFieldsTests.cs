using MongoDB.Bson;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;
using WorkflowService.Storage.MongoDb;

namespace WorkflowService.Tests.Store;

/// <summary>
/// The instance document's search fields after a commit (no server needed): a commit may evaluate only some attributes,
/// and those it did not evaluate keep their stored values.
/// </summary>
public sealed class MongoSearchFieldsTests
{
    private static readonly Dictionary<string, DeclaredSearchAttribute> Declared = new(StringComparer.Ordinal)
    {
        ["region"] = new("region", SearchValueType.Keyword, "kw01"),
        ["amount"] = new("amount", SearchValueType.Number, "num01"),
        ["note"] = new("note", SearchValueType.Text, "txt01"),
    };

    [Fact]
    public void A_new_instance_gets_each_value_in_its_slot_and_no_field_for_an_empty_one()
    {
        var document = SearchFields.Document(null,
            [new("region", SearchValueType.Keyword, "EU"), new("amount", SearchValueType.Number, 700m), new("note", SearchValueType.Text, null)], Declared);

        Assert.Equal(new BsonDocument { ["kw01"] = "EU", ["num01"] = 700.0 }, document);
    }

    [Fact]
    public void A_commit_with_some_attributes_keeps_the_others_and_removes_what_became_empty()
    {
        var stored = new BsonDocument { ["kw01"] = "EU", ["num01"] = 700.0, ["txt01"] = "a note" };

        var document = SearchFields.Document(stored, [new("amount", SearchValueType.Number, 800m), new("note", SearchValueType.Text, null)], Declared);

        Assert.Equal(new BsonDocument { ["kw01"] = "EU", ["num01"] = 800.0 }, document);
        Assert.Equal(new BsonDocument { ["kw01"] = "EU", ["num01"] = 700.0, ["txt01"] = "a note" }, stored);
    }
}
