using System.Text.Json.Nodes;
using System.Text.Json.Serialization;

namespace WorkflowService.Engine.Definitions;

/// <summary>The JSON form of a workflow definition, as users write and publish it (see docs/definition-format.md).</summary>
public sealed class DefinitionDocument
{
    [JsonPropertyName("name")] public string? Name { get; set; }
    [JsonPropertyName("description")] public string? Description { get; set; }
    /// <summary>Initial values of the instance variables (plain JSON values).</summary>
    [JsonPropertyName("variables")] public JsonObject? Variables { get; set; }
    [JsonPropertyName("steps")] public List<StepDocument>? Steps { get; set; }
    /// <summary>The cancel path: where a cooperative cancel continues; it must end without waiting.</summary>
    [JsonPropertyName("onCancel")] public string? OnCancel { get; set; }
    /// <summary>Typed values by name, each set by an expression at every commit, that GET /instances filters on (docs/search.md).</summary>
    [JsonPropertyName("searchAttributes")] public Dictionary<string, SearchAttributeDocument?>? SearchAttributes { get; set; }
}

/// <summary>One step of a definition; which fields apply depends on <see cref="Type"/>.</summary>
public sealed class StepDocument
{
    [JsonPropertyName("id")] public string? Id { get; set; }
    [JsonPropertyName("type")] public string? Type { get; set; }
    [JsonPropertyName("description")] public string? Description { get; set; }
    /// <summary>The step to run next; defaults to the following step in the list.</summary>
    [JsonPropertyName("next")] public string? Next { get; set; }

    // assign
    [JsonPropertyName("set")] public Dictionary<string, string>? Set { get; set; }

    // waitForSignal
    [JsonPropertyName("signal")] public string? Signal { get; set; }
    [JsonPropertyName("timeout")] public string? Timeout { get; set; }
    [JsonPropertyName("onTimeout")] public string? OnTimeout { get; set; }

    // waitForSignal, humanTask: the variable that receives the signal payload or the task result
    [JsonPropertyName("output")] public string? Output { get; set; }

    // delay
    [JsonPropertyName("duration")] public string? Duration { get; set; }

    // decision (condition and target per branch), parallel (name and steps per branch)
    [JsonPropertyName("branches")] public List<BranchDocument>? Branches { get; set; }
    [JsonPropertyName("otherwise")] public string? Otherwise { get; set; }

    // humanTask
    [JsonPropertyName("title")] public string? Title { get; set; }
    [JsonPropertyName("assignee")] public string? Assignee { get; set; }
    [JsonPropertyName("role")] public string? Role { get; set; }
    [JsonPropertyName("data")] public string? Data { get; set; }

    // complete
    [JsonPropertyName("result")] public string? Result { get; set; }

    // fail
    [JsonPropertyName("reason")] public string? Reason { get; set; }

    // emit: the custom event's type (an expression), and its data (in `data`)
    [JsonPropertyName("event")] public string? Event { get; set; }

    // http: a call-out whose response lands in `output`
    [JsonPropertyName("method")] public string? Method { get; set; }
    [JsonPropertyName("url")] public string? Url { get; set; }
    [JsonPropertyName("body")] public string? Body { get; set; }
    [JsonPropertyName("headers")] public Dictionary<string, string>? Headers { get; set; }
    [JsonPropertyName("retries")] public int? Retries { get; set; }

    // subWorkflow: the child definition (latest version unless given) and its input
    [JsonPropertyName("definition")] public string? Definition { get; set; }
    [JsonPropertyName("version")] public int? Version { get; set; }
    [JsonPropertyName("input")] public string? Input { get; set; }

    // forEach: the array to work over, its body (or a child per item: definition, version, input), how items run and
    // when the step is done; each item's result (`result`) lands in `output`, in item order
    [JsonPropertyName("items")] public string? Items { get; set; }
    [JsonPropertyName("steps")] public List<StepDocument>? Steps { get; set; }
    [JsonPropertyName("mode")] public string? Mode { get; set; }
    [JsonPropertyName("maxConcurrency")] public int? MaxConcurrency { get; set; }
    [JsonPropertyName("completion")] public CompletionDocument? Completion { get; set; }
    [JsonPropertyName("toleratedFailures")] public int? ToleratedFailures { get; set; }

    // steps that evaluate expressions: where to continue when one throws, and the variable that receives the error
    [JsonPropertyName("onError")] public string? OnError { get; set; }
    [JsonPropertyName("errorOutput")] public string? ErrorOutput { get; set; }
}

/// <summary>A branch: of a decision (<see cref="When"/> and <see cref="Next"/>) or of a parallel step (<see cref="Name"/> and <see cref="Steps"/>).</summary>
public sealed class BranchDocument
{
    [JsonPropertyName("when")] public string? When { get; set; }
    [JsonPropertyName("next")] public string? Next { get; set; }

    /// <summary>A parallel branch's name, unique within its step.</summary>
    [JsonPropertyName("name")] public string? Name { get; set; }
    /// <summary>A parallel branch's steps: it starts at the first and joins when it runs off the end of the list.</summary>
    [JsonPropertyName("steps")] public List<StepDocument>? Steps { get; set; }
}

/// <summary>A forEach step's completion rule: one of its fields; none (the field left out) waits for every item.</summary>
public sealed class CompletionDocument
{
    /// <summary>Done when this many items have succeeded.</summary>
    [JsonPropertyName("atLeast")] public int? AtLeast { get; set; }
    /// <summary>Done when this fraction of the items (rounded up) has succeeded.</summary>
    [JsonPropertyName("fraction")] public double? Fraction { get; set; }
    /// <summary>Done when the first item succeeds.</summary>
    [JsonPropertyName("firstSuccess")] public bool? FirstSuccess { get; set; }
}
