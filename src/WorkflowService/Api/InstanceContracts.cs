using System.ComponentModel;
using System.Text.Json;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Search;

namespace WorkflowService.Api;

/// <summary>Starts an instance of a definition (its latest version unless <c>version</c> is given) with an optional input.</summary>
public sealed record StartInstanceRequest(
    [property: Description("The name of a published definition.")] string Definition,
    [property: Description("The definition version to start; the latest when left out.")] int? Version = null,
    [property: Description("Any JSON value; the instance's expressions read it as input.")] JsonElement? Input = null,
    [property: Description("An optional key of the caller's own (1-200 characters): starting again with the same key returns the open instance that has it; once that ended, a new one starts.")] string? BusinessKey = null);

/// <summary>
/// Where an instance waits; in a parallel step (kind Parallel), where each of its branches waits or that it joined; in
/// a forEach step (kind Parallel too), one branch per item, named by its index, and <c>items</c>: how far they are.
/// </summary>
public sealed record WaitView(WaitKind Kind, string StepId, string? Signal, Guid? TimerId, Guid? TaskId, IReadOnlyList<BranchView>? Branches,
    ItemsView? Items = null)
{
    public static WaitView? From(WorkflowInstance i)
    {
        if (i.WaitKind is not { } kind)
        {
            return null;
        }

        var branches = kind == WaitKind.Parallel ? i.ParallelBranches() : null;
        return new WaitView(kind, i.WaitStepId!, i.WaitSignal, i.WaitSignalId, i.WaitTaskId, branches?.Select(BranchView.From).ToList(),
            branches is null ? null : ItemsView.From(ForEachItems.Progress(branches)));
    }
}

/// <summary>
/// One branch of the parallel step an instance is in: its wait, or joined (it waits for the other branches). For an
/// item of a forEach step, also its <c>index</c>, its <c>outcome</c> and, once failed, its <c>error</c>.
/// </summary>
public sealed record BranchView(string Name, bool Joined, WaitKind? Kind, string? StepId, string? Signal, Guid? TimerId, Guid? TaskId,
    int? Index = null, ItemOutcome? Outcome = null, string? Error = null)
{
    public static BranchView From(BranchWait b) => new(b.Name, b.Joined, b.Kind, b.StepId, b.Signal, b.SignalId, b.TaskId, b.Index, b.Outcome, b.Error);
}

/// <summary>How far the items of a forEach step are: <c>summary</c> reads "3 of 12 done" (done: succeeded or failed).</summary>
public sealed record ItemsView(int Total, int Done, int Succeeded, int Failed, int Open, int Pending, string Summary)
{
    public static ItemsView? From(ForEachProgress? p) =>
        p is null ? null : new(p.Total, p.Done, p.Succeeded, p.Failed, p.Open, p.Pending, p.ToString());
}

/// <summary>
/// An instance: its status, input, variables and output (any JSON values), its error once failed, and where it waits
/// (<c>wait</c>, null unless it waits); <c>parkedSignals</c> counts signals that arrived before a wait matched them;
/// <c>version</c> is its definition's version, <c>revision</c> how many times its state has been committed (1 when it
/// first waits or ends; GET with afterRevision waits for a later one).
/// </summary>
public sealed record InstanceView(
    Guid Id,
    string Definition,
    int Version,
    InstanceStatus Status,
    string? BusinessKey,
    JsonElement? Input,
    JsonElement? Variables,
    JsonElement? Output,
    string? Error,
    WaitView? Wait,
    int ParkedSignals,
    DateTime CreatedAt,
    DateTime UpdatedAt,
    DateTime? CompletedAt,
    string? StartedBy,
    int Revision,
    [property: Description("The instance's search attribute values (docs/search.md), as its last commit wrote them; left out when it has none.")]
    IReadOnlyDictionary<string, JsonElement>? SearchAttributes = null)
{
    public static InstanceView From(WorkflowInstance i) => From(i, i.SearchAttributes);

    /// <summary>The instance with <paramref name="searchAttributes"/> as its values (read apart, the instance not copied for them).</summary>
    public static InstanceView From(WorkflowInstance i, IReadOnlyList<SearchAttributeValue>? searchAttributes) => new(
        i.Id, i.DefinitionName, i.DefinitionVersion, i.Status, i.BusinessKey,
        Json.Element(i.InputJson), Json.Element(i.VariablesJson), Json.Element(i.OutputJson), i.Error,
        WaitView.From(i),
        i.ParkedSignals, i.CreatedAt, i.UpdatedAt, i.CompletedAt, i.StartedBy, i.Version, InstanceSearch.View(searchAttributes));
}

/// <summary>An instance in a list: its status and the step it waits at, without its data.</summary>
public sealed record InstanceSummaryView(
    Guid Id, string Definition, int Version, InstanceStatus Status, string? BusinessKey, string? WaitStepId,
    DateTime CreatedAt, DateTime UpdatedAt, DateTime? CompletedAt,
    [property: Description("Its search attribute values, in a list read with filter or orderBy; left out otherwise.")]
    IReadOnlyDictionary<string, JsonElement>? SearchAttributes = null)
{
    public static InstanceSummaryView From(WorkflowInstance i) =>
        new(i.Id, i.DefinitionName, i.DefinitionVersion, i.Status, i.BusinessKey, i.WaitStepId, i.CreatedAt, i.UpdatedAt, i.CompletedAt,
            InstanceSearch.View(i.SearchAttributes));
}

/// <summary>
/// One event of an instance's history, numbered from 0 in order; <c>actor</c> is who caused it through the API (a token's
/// user id or a key's name), null for the engine's own work.
/// </summary>
public sealed record HistoryEventView(int Sequence, DateTime At, string Type, string? StepId, JsonElement? Data, string? Actor)
{
    public static HistoryEventView From(HistoryEvent h) => new(h.Sequence, h.At, h.Type, h.StepId, Json.Element(h.DataJson), h.Actor);
}

/// <summary>The body of cancel, terminate and suspend: an optional reason, kept in the history.</summary>
public sealed record InstanceActionRequest([property: Description("Why; kept in the instance history.")] string? Reason = null);

/// <summary>
/// A page of a list: its items, how many there are in all, the offset and limit it was asked with, and, where the list
/// pages by cursor (instances, a history, an instance's signals, a definition's versions), the cursor of the page after it.
/// </summary>
public sealed record PageView<T>(
    IReadOnlyList<T> Items,
    int Total,
    int Offset,
    int Limit,
    [property: Description("The cursor of the next page: pass it as after. Null on the last page, and in lists that page by offset only.")]
    string? Next = null)
{
    /// <summary>A page read by position: offset 0, and the last item's cursor as next when more follow.</summary>
    internal static PageView<T> Of<TItem>(KeysetPage<TItem> page, int limit, Func<TItem, T> view, Func<TItem, string> cursor) =>
        new(page.Items.Select(view).ToList(), page.Total, 0, limit, page.More ? cursor(page.Items[^1]) : null);
}

/// <summary>Counts by value of one field: each value with how many instances have it, most first.</summary>
public sealed record SearchCountsView(
    string By,
    IReadOnlyList<SearchValueCountView> Values,
    [property: System.ComponentModel.Description("False when counting stopped at Search:MaxCounted instances: the counts are of the first ones found.")]
    bool Complete)
{
    internal static SearchCountsView From(string by, Engine.Persistence.SearchValueCounts counts) =>
        new(by, counts.Values.Select(v => new SearchValueCountView(JsonSerializer.SerializeToElement(v.Value), v.Count)).ToList(), counts.Complete);
}

/// <summary>A value (a string, number or bool) and how many instances have it.</summary>
public sealed record SearchValueCountView(JsonElement Value, long Count);
