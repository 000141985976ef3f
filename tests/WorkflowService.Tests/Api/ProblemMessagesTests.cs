using System.Net;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json.Nodes;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Api;

/// <summary>
/// Issue #11, point 8: a 400 answer speaks of the JSON and the query string the client sent (the field or JSON path, and
/// what was expected there), never of the service's .NET types. One test per way a request can fail to be read.
/// </summary>
public abstract class ProblemMessagesTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    private const string Statuses = "Running, Waiting, Completed, Failed, Faulted, Cancelled, Suspended";

    [Fact]
    public async Task Malformed_json_names_the_json_path_and_position()
    {
        using var response = await PostAsync("/instances", """{ "definition": "x", "input": }""");

        var detail = await BadRequestAsync(response, "$.input");
        Assert.Contains("not valid JSON", detail, StringComparison.Ordinal);
        Assert.Contains("'}' is an invalid start of a value", detail, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("""{ "definition": 5 }""", "$.definition", "$.definition: expected a string")]
    [InlineData("""{ "definition": "x", "version": "two" }""", "$.version", "$.version: expected a whole number")]
    [InlineData("""{ "definition": "x", "version": 1.5 }""", "$.version", "$.version: expected a whole number")]
    // Issue #13: numbers are JSON numbers only (no "2" for 2), so that the OpenAPI document can type them as integers.
    [InlineData("""{ "definition": "x", "version": "2" }""", "$.version", "$.version: expected a whole number")]
    [InlineData("""{ "definition": "x", "businessKey": ["a"] }""", "$.businessKey", "$.businessKey: expected a string")]
    public async Task A_field_of_the_wrong_json_type_names_its_path_and_the_expected_type(string body, string path, string message)
    {
        using var response = await PostAsync("/instances", body);

        Assert.Contains(message, await BadRequestAsync(response, path), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("[1, 2]")]
    [InlineData("\"start\"")]
    public async Task A_body_that_is_not_an_object_says_an_object_with_its_fields_was_expected(string body)
    {
        using var response = await PostAsync("/instances", body);

        Assert.Contains("$: expected a JSON object with the fields definition, version, input, businessKey", await BadRequestAsync(response, "$"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_value_of_the_wrong_type_inside_a_map_names_its_nested_path()
    {
        using var response = await PostAsync("/instances/migrate", """{ "definition": "x", "toVersion": 2, "stepMap": { "a": 1 } }""");

        Assert.Contains("$.stepMap.a: expected a string", await BadRequestAsync(response, "$.stepMap.a"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_date_field_that_is_not_a_date_says_which_form_is_expected()
    {
        using var response = await PostAsync($"/instances/{Guid.NewGuid()}/signals", """{ "name": "go", "dueAt": "tomorrow" }""");

        Assert.Contains("$.dueAt: expected a date and time in ISO 8601 form", await BadRequestAsync(response, "$.dueAt"), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("/instances", "definition, version, input, businessKey")]
    [InlineData("/tasks/3f2504e0-4f89-41d3-9a0c-0305e82c3301/claim", "user")]
    public async Task An_empty_body_says_a_json_object_was_expected(string path, string fields)
    {
        using var response = await PostAsync(path, "");

        var detail = await BadRequestAsync(response, "$");
        Assert.Contains($"$: expected a JSON object with the fields {fields}", detail, StringComparison.Ordinal);
        Assert.Contains("the request body is empty", detail, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_json_null_body_says_a_json_object_was_expected()
    {
        using var response = await PostAsync("/instances", "null");

        var detail = await BadRequestAsync(response, "$");
        Assert.Contains("$: expected a JSON object with the fields definition, version, input, businessKey", detail, StringComparison.Ordinal);
        Assert.Contains("null", detail, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("/instances?status=Bogus", "status: 'Bogus' is not one of Running, Waiting, Completed, Failed, Faulted, Cancelled, Suspended")]
    [InlineData("/tasks?status=Bogus", "status: 'Bogus' is not one of Open, Claimed, Completed, Cancelled")]
    [InlineData("/signals?status=Bogus", "status: 'Bogus' is not one of Pending, Parked, Handled, Unmatched, DeadLettered, Cancelled")]
    public async Task An_unknown_status_filter_lists_the_statuses(string url, string message)
    {
        using var response = await Api.Http.GetAsync(url);

        Assert.Contains(message, await BadRequestAsync(response, "status"), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("/instances?limit=abc", "limit", "limit: 'abc' is not a whole number")]
    [InlineData("/tasks?offset=1.5", "offset", "offset: '1.5' is not a whole number")]
    [InlineData("/dead-letters?limit=", "limit", "limit: expected a whole number")]
    [InlineData("/instances?limit=1&limit=2", "limit", "limit: expected one value")]
    public async Task A_query_number_that_is_not_a_whole_number_names_the_parameter(string url, string field, string message)
    {
        using var response = await Api.Http.GetAsync(url);

        Assert.Contains(message, await BadRequestAsync(response, field), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_query_id_that_is_not_a_uuid_names_the_parameter()
    {
        using var response = await Api.Http.GetAsync("/tasks?instanceId=nope");

        Assert.Contains("instanceId: 'nope' is not a UUID", await BadRequestAsync(response, "instanceId"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_query_date_that_is_not_a_date_names_the_parameter_and_the_form()
    {
        using var response = await Api.Http.GetAsync("/instances?createdFrom=yesterday");

        Assert.Contains("createdFrom: 'yesterday' is not a date and time in ISO 8601 form", await BadRequestAsync(response, "createdFrom"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_wait_timeout_that_is_not_a_number_names_the_parameter()
    {
        using var response = await Api.Http.GetAsync($"/instances/{Guid.NewGuid()}?waitFor=Completed&timeout=abc");

        Assert.Contains("timeout: 'abc' is not a number", await BadRequestAsync(response, "timeout"), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("waitFor=Bogus", "waitFor: 'Bogus' is not one of Running, Waiting, Completed, Failed, Faulted, Cancelled, Suspended")]
    [InlineData("waitFor=", "waitFor: expected one or more of Running, Waiting, Completed, Failed, Faulted, Cancelled, Suspended")]
    [InlineData("waitFor=,%20,", "waitFor: expected one or more of Running, Waiting, Completed, Failed, Faulted, Cancelled, Suspended")]
    [InlineData("waitFor=Completed,Bogus&waitFor=Failed", "waitFor: 'Bogus' is not one of Running, Waiting, Completed, Failed, Faulted, Cancelled, Suspended")]
    [InlineData("waitFor=2", "waitFor: '2' is not one of Running, Waiting, Completed, Failed, Faulted, Cancelled, Suspended")]
    public async Task A_bad_wait_for_list_names_the_parameter_and_lists_the_statuses(string query, string message)
    {
        using var response = await Api.Http.GetAsync($"/instances/{Guid.NewGuid()}?{query}&timeout=1");

        Assert.Contains(message, await BadRequestAsync(response, "waitFor"), StringComparison.Ordinal);
        Assert.Contains(Statuses, message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("afterRevision=-1&timeout=1", "afterRevision", "afterRevision: expected a revision (0 or more), got -1")]
    [InlineData("afterRevision=x&timeout=1", "afterRevision", "afterRevision: 'x' is not")]
    [InlineData("afterRevision=2&waitFor=Completed&timeout=1", "afterRevision", "waitFor and afterRevision: give one of them, not both")]
    [InlineData("afterRevision=2", "timeout", "with afterRevision, timeout (seconds, at least 0) is required")]
    [InlineData("waitFor=Completed&timeout=-1", "timeout", "with waitFor, timeout (seconds, at least 0) is required")]
    public async Task A_bad_wait_after_a_revision_names_the_parameter(string query, string parameter, string message)
    {
        using var response = await Api.Http.GetAsync($"/instances/{Guid.NewGuid()}?{query}");

        Assert.Contains(message, await BadRequestAsync(response, parameter), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("waitFor=Completed")]
    [InlineData("waitFor=completed,%20FAILED%20")]
    [InlineData("waitFor=Completed,Failed&waitFor=Faulted")]
    public async Task A_wait_for_list_takes_names_in_any_case_separated_by_commas_or_repeated(string query)
    {
        var unknown = Guid.NewGuid();
        using var response = await Api.Http.GetAsync($"/instances/{unknown}?{query}&timeout=0");

        // Parsed: the answer is about the instance (there is none), not the query.
        Assert.Equal($"No instance has the id {unknown}.", (string?)(await ApiClient.ProblemAsync(response, HttpStatusCode.NotFound))["detail"]);
    }

    [Fact]
    public async Task An_id_in_the_path_that_is_not_a_uuid_is_not_found_without_type_names()
    {
        using var response = await Api.Http.GetAsync("/instances/not-a-uuid");

        var body = await response.Content.ReadAsStringAsync();
        await ApiClient.ProblemAsync(response, HttpStatusCode.NotFound);
        ClientTerms.AssertNoDotNetNames(body);
    }

    [Fact]
    public async Task An_idempotency_key_header_too_long_names_the_header()
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, "/instances") { Content = JsonContent.Create(new { definition = "x" }) };
        request.Headers.Add("Idempotency-Key", new string('k', 201));
        using var response = await Api.Http.SendAsync(request);

        Assert.Contains("Idempotency-Key must be 1 to 200 characters", await BadRequestAsync(response, "Idempotency-Key"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_body_that_is_not_json_by_its_content_type_is_unsupported_without_type_names()
    {
        using var response = await Api.Http.PostAsync("/instances", new StringContent("""{ "definition": "x" }""", Encoding.UTF8, "text/plain"));

        var body = await response.Content.ReadAsStringAsync();
        await ApiClient.ProblemAsync(response, HttpStatusCode.UnsupportedMediaType);
        ClientTerms.AssertNoDotNetNames(body);
    }

    private Task<HttpResponseMessage> PostAsync(string path, string body) =>
        Api.Http.PostAsync(path, new StringContent(body, Encoding.UTF8, "application/json"));

    /// <summary>Asserts a 400 problem whose errors name <paramref name="field"/>, free of .NET names; returns its detail.</summary>
    private static async Task<string> BadRequestAsync(HttpResponseMessage response, string field)
    {
        var body = await response.Content.ReadAsStringAsync();
        var problem = await ApiClient.ProblemAsync(response, HttpStatusCode.BadRequest);
        ClientTerms.AssertNoDotNetNames(body);
        var errors = Assert.IsType<JsonObject>(problem["errors"]);
        Assert.True(errors.ContainsKey(field), $"no error for '{field}' in {body}");
        return (string)problem["detail"]!;
    }
}

public sealed class SqliteProblemMessagesTests : ProblemMessagesTests<SqliteBackend>;

public sealed class PostgresProblemMessagesTests : ProblemMessagesTests<PostgresBackend>;

public sealed class MongoDbProblemMessagesTests : ProblemMessagesTests<MongoDbBackend>;
