using System.Globalization;
using System.Reflection;
using System.Text.Json;
using Microsoft.AspNetCore.Http.Metadata;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Extensions.Primitives;
using WorkflowService.Engine;

namespace WorkflowService.Api;

/// <summary>
/// Says what was wrong with a request that could not be read, in terms of the JSON and query string the client sent: the
/// field or JSON path, and what was expected there. Never a .NET type name: ASP.NET Core's own messages ("Failed to bind
/// parameter "Nullable&lt;InstanceStatus&gt; status"", "could not be converted to WorkflowService.Api.StartInstanceRequest")
/// are worked out again from the endpoint's parameters and the JSON contract instead of being passed on.
/// </summary>
internal static class RequestProblems
{
    public const string Title = "The request is not valid";

    /// <summary>The body did not read as the operation's JSON: a syntax error, or a value of the wrong kind at a path.</summary>
    public static HttpValidationProblemDetails ForJson(JsonException json, Type? bodyType, JsonSerializerOptions options)
    {
        var problem = JsonReadProblem.Explain(json, bodyType, options);
        return Invalid(problem.Path, problem.IsSyntax
            ? $"The request body is not valid JSON at {problem.Path}: {problem.Reason}"
            : $"{problem.Path}: {problem.Reason}");
    }

    /// <summary>
    /// A query-string, route or header value that does not parse as its parameter, found again from the endpoint's
    /// handler; null when every such value parses.
    /// </summary>
    public static HttpValidationProblemDetails? ForParameters(
        HttpContext context, Endpoint? endpoint, RouteValueDictionary? routeValues, JsonSerializerOptions options)
    {
        if (endpoint?.Metadata.GetMetadata<MethodInfo>() is not { } handler)
        {
            return null;
        }

        var errors = new Dictionary<string, string[]>();
        foreach (var parameter in handler.GetParameters())
        {
            var type = Nullable.GetUnderlyingType(parameter.ParameterType) ?? parameter.ParameterType;
            if (type == typeof(string) || (!type.IsEnum && TryParseMethod(type) is null))
            {
                continue;
            }

            var (name, values) = Value(context.Request, routeValues ?? [], parameter);
            if (values.Count == 0 || Parses(type, values.ToString()))
            {
                continue;
            }

            var value = values.ToString();
            errors[name] = [values.Count > 1 ? $"{name}: expected one value, {Expected(type, options)}; got {values.Count}"
                : value.Length == 0 ? $"{name}: expected {Expected(type, options)}; got an empty value"
                : $"{name}: '{value}' is not {Expected(type, options)}"];
        }

        return errors.Count == 0 ? null : Invalid(errors);
    }

    /// <summary>The operation takes a JSON body and none (or JSON <c>null</c>) was sent.</summary>
    public static HttpValidationProblemDetails? ForMissingBody(HttpContext context, Endpoint? endpoint, JsonSerializerOptions options)
    {
        if (endpoint?.Metadata.GetMetadata<IAcceptsMetadata>() is not { RequestType: { } bodyType, IsOptional: false })
        {
            return null;
        }

        var sent = context.Request.ContentLength switch
        {
            0 => "the request body is empty",
            > 0 => "the request body is null",
            _ => "the request body is empty or null",
        };
        return Invalid("$", $"$: expected {Expected(bodyType, options)}; {sent}");
    }

    /// <summary>What a value of <paramref name="type"/> looks like in JSON or in a query string, in the client's terms.</summary>
    public static string Expected(Type type, JsonSerializerOptions options) => JsonReadProblem.Expected(type, options);

    private static HttpValidationProblemDetails Invalid(string field, string message) =>
        Invalid(new Dictionary<string, string[]> { [field] = [message] });

    private static HttpValidationProblemDetails Invalid(Dictionary<string, string[]> errors) => new(errors)
    {
        Status = StatusCodes.Status400BadRequest,
        Title = Title,
        Detail = string.Join("; ", errors.Values.SelectMany(m => m)),
    };

    /// <summary>Where a simple parameter is bound from, the way minimal APIs bind it, and the values sent there.</summary>
    private static (string Name, StringValues Values) Value(HttpRequest request, RouteValueDictionary routeValues, ParameterInfo parameter)
    {
        if (parameter.GetCustomAttribute<FromHeaderAttribute>() is { } header)
        {
            var name = header.Name ?? parameter.Name!;
            return (name, request.Headers[name]);
        }

        var route = parameter.GetCustomAttribute<FromRouteAttribute>();
        var routeName = route?.Name ?? parameter.Name!;
        if (route is not null || (parameter.GetCustomAttribute<FromQueryAttribute>() is null && routeValues.ContainsKey(routeName)))
        {
            return (routeName, routeValues.TryGetValue(routeName, out var value) ? Convert.ToString(value, CultureInfo.InvariantCulture) : StringValues.Empty);
        }

        var queryName = parameter.GetCustomAttribute<FromQueryAttribute>()?.Name ?? parameter.Name!;
        return (queryName, request.Query[queryName]);
    }

    private static bool Parses(Type type, string value)
    {
        if (type.IsEnum)
        {
            return Enum.TryParse(type, value, ignoreCase: false, out _);
        }

        object?[] arguments = [value, CultureInfo.InvariantCulture, null];
        return (bool)TryParseMethod(type)!.Invoke(null, arguments)!;
    }

    private static MethodInfo? TryParseMethod(Type type) =>
        type.GetMethod("TryParse", BindingFlags.Public | BindingFlags.Static, [typeof(string), typeof(IFormatProvider), type.MakeByRefType()]);
}
