using WorkflowService.Engine.Definitions;

namespace WorkflowService.Engine.Events;

/// <summary>What a caller asks a subscription to be: everything but its identity, state and secrets.</summary>
public sealed record SubscriptionSpec(string? Name, string? Endpoint, IReadOnlyList<string>? Events, IReadOnlyList<string>? Definitions,
    int? MaxEventsPerBatch = null)
{
    public const int MaxNameLength = 100;
    public const int MaxEndpointLength = 2_000;

    /// <summary>What is wrong with it, each problem at its JSON path; empty when nothing is.</summary>
    /// <param name="allowHttp">Whether a plain http endpoint is accepted.</param>
    /// <param name="maxDefinitions">The most definitions it may name.</param>
    /// <param name="maxBatch">The largest batch it may ask for (Events:MaxEventsPerBatch).</param>
    public List<Diagnostic> Problems(bool allowHttp, int maxDefinitions, int maxBatch)
    {
        var problems = new List<Diagnostic>();
        if (string.IsNullOrWhiteSpace(Name) || Name.Length > MaxNameLength || Name.Trim() != Name)
        {
            problems.Add(new Diagnostic("$.name", $"a name of 1 to {MaxNameLength} characters, without spaces around it, is required"));
        }

        if (EndpointProblem(Endpoint, allowHttp) is { } endpoint)
        {
            problems.Add(new Diagnostic("$.endpoint", endpoint));
        }

        if (Events is not { Count: > 0 })
        {
            problems.Add(new Diagnostic("$.events", $"at least one event type is required: {string.Join(", ", EventTypes.Standard)}, "
                + $"a custom event's type, or '{EventTypes.All}' for every event"));
        }
        else
        {
            for (var i = 0; i < Events.Count; i++)
            {
                if (EventTypes.SubscriptionEntryProblem(Events[i] ?? "") is { } problem)
                {
                    problems.Add(new Diagnostic($"$.events[{i}]", problem));
                }
            }
        }

        var definitions = Definitions ?? [];
        if (definitions.Count > maxDefinitions)
        {
            problems.Add(new Diagnostic("$.definitions", $"a subscription names at most {maxDefinitions} definitions (it names {definitions.Count})"));
        }

        for (var i = 0; i < definitions.Count; i++)
        {
            if (string.IsNullOrWhiteSpace(definitions[i]) || definitions[i].Length > MaxNameLength)
            {
                problems.Add(new Diagnostic($"$.definitions[{i}]", $"a definition name of 1 to {MaxNameLength} characters is expected"));
            }
        }

        if (MaxEventsPerBatch is { } batch && (batch < 1 || batch > maxBatch))
        {
            problems.Add(new Diagnostic("$.maxEventsPerBatch",
                $"a whole number from 1 (each event posted alone, the default) to {maxBatch} (Events:MaxEventsPerBatch) is expected"));
        }

        return problems;
    }

    private static string? EndpointProblem(string? endpoint, bool allowHttp)
    {
        if (string.IsNullOrEmpty(endpoint))
        {
            return "an endpoint URL is required";
        }

        if (endpoint.Length > MaxEndpointLength)
        {
            return $"the endpoint has {endpoint.Length} characters; at most {MaxEndpointLength} are accepted";
        }

        if (!Uri.TryCreate(endpoint, UriKind.Absolute, out var uri) || (uri.Scheme != Uri.UriSchemeHttps && uri.Scheme != Uri.UriSchemeHttp))
        {
            return "an absolute https URL is expected, such as https://example.com/hooks/workflow";
        }

        if (uri.Scheme == Uri.UriSchemeHttp && !allowHttp)
        {
            return "the endpoint must use https (Events:AllowHttpEndpoints is off)";
        }

        if (uri.UserInfo.Length > 0)
        {
            return "the endpoint may not carry a user name or password; the signature authenticates each delivery";
        }

        return uri.Fragment.Length > 0 ? "the endpoint may not have a fragment (#...)" : null;
    }
}
