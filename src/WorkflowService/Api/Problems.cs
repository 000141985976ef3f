using Microsoft.AspNetCore.Http.HttpResults;

namespace WorkflowService.Api;

/// <summary>RFC 9457 answers with a plain-language detail; the title follows the status.</summary>
internal static class Problems
{
    public static ProblemHttpResult NotFound(string detail) => TypedResults.Problem(detail, statusCode: StatusCodes.Status404NotFound, title: "Not found");

    public static ProblemHttpResult Conflict(string detail) => TypedResults.Problem(detail, statusCode: StatusCodes.Status409Conflict, title: "Conflict");

    public static ProblemHttpResult BadRequest(string detail) => TypedResults.Problem(detail, statusCode: StatusCodes.Status400BadRequest, title: "Bad request");

    public static ValidationProblem Invalid(string field, string message) =>
        TypedResults.ValidationProblem(new Dictionary<string, string[]> { [field] = [message] }, detail: message, title: "The request is not valid");
}
