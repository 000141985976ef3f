using Microsoft.AspNetCore.Http.HttpResults;

namespace WorkflowService.Api;

/// <summary>RFC 9457 answers with a plain-language detail; the title follows the status.</summary>
internal static class Problems
{
    public static ProblemHttpResult NotFound(string detail) => TypedResults.Problem(detail, statusCode: StatusCodes.Status404NotFound, title: "Not found");

    public static ProblemHttpResult Forbidden(string detail) => TypedResults.Problem(detail, statusCode: StatusCodes.Status403Forbidden, title: "Forbidden");

    public static ProblemHttpResult Conflict(string detail) => TypedResults.Problem(detail, statusCode: StatusCodes.Status409Conflict, title: "Conflict");

    public static ProblemHttpResult BadRequest(string detail) => TypedResults.Problem(detail, statusCode: StatusCodes.Status400BadRequest, title: "Bad request");

    /// <summary>The one paging rule of every list: offset from 0, limit from 1 to 500; null when the page is valid.</summary>
    public static ValidationProblem? InvalidPage(int offset, int limit) =>
        offset < 0 ? Invalid("offset", "offset must not be negative")
        : limit is < 1 or > 500 ? Invalid("limit", "limit must be between 1 and 500")
        : null;

    /// <summary>An <c>after</c> that is not the <c>next</c> of a page of the list it was sent to.</summary>
    public static ValidationProblem InvalidAfter() => Invalid("after", "after must be the next of a page of this list, as the service returned it");

    public static ValidationProblem Invalid(string field, string message) =>
        TypedResults.ValidationProblem(new Dictionary<string, string[]> { [field] = [message] }, detail: message, title: "The request is not valid");
}
