using System.Globalization;
using WorkflowService.Api;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;

namespace WorkflowService.OperatorConsole;

/// <summary>The instance list's filters as the page's query string holds them.</summary>
public sealed record InstanceFilter(string? Definition, InstanceStatus? Status, string? BusinessKey, DateTime? CreatedFrom, DateTime? CreatedTo, string? After)
{
    public string? CreatedFromText => CreatedFrom?.ToString("yyyy-MM-dd'T'HH:mm:ss", CultureInfo.InvariantCulture);

    public string? CreatedToText => CreatedTo?.ToString("yyyy-MM-dd'T'HH:mm:ss", CultureInfo.InvariantCulture);

    public string WithStatus(InstanceStatus? status) => (this with { Status = status, After = null }).Link();

    public string WithAfter(string? after) => (this with { After = after }).Link();

    public string Link()
    {
        var query = new List<string>();
        void Add(string name, string? value)
        {
            if (!string.IsNullOrEmpty(value))
            {
                query.Add($"{name}={Uri.EscapeDataString(value)}");
            }
        }

        Add("definition", Definition);
        Add("status", Status?.ToString());
        Add("businessKey", BusinessKey);
        Add("createdFrom", CreatedFromText);
        Add("createdTo", CreatedToText);
        Add("after", After);
        return query.Count == 0 ? ConsolePaths.Instances : $"{ConsolePaths.Instances}?{string.Join('&', query)}";
    }
}

public sealed record InstancesModel(
    ConsoleCaller Caller, InstanceFilter Filter, Page<WorkflowInstance> Page, IReadOnlyDictionary<InstanceStatus, long> Counts, string? Next,
    IReadOnlyList<string> DefinitionNames, string? Error);

public sealed record InstanceModel(
    ConsoleCaller Caller,
    WorkflowInstance Instance,
    string? Diagram,
    CursorList<HistoryEvent> History,
    CursorList<SignalMessage> Signals,
    IReadOnlyList<HumanTask> Tasks,
    Page<WorkflowInstance> Children,
    IReadOnlyList<int> Versions,
    string? Notice)
{
    /// <summary>This page with the history at <paramref name="after"/> (the first page when null), the signals where they are.</summary>
    public string WithHistory(string? after) => ConsolePaths.Instance(Instance.Id, after, Signals.After);

    /// <summary>This page with the signals at <paramref name="after"/> (the first page when null), the history where it is.</summary>
    public string WithSignals(string? after) => ConsolePaths.Instance(Instance.Id, History.After, after);
}

/// <summary>
/// A page of a list paged by cursor: its items, how many the list holds, the cursor it was read after (null: the first
/// page), the cursor of the next page (null: the last), and, where the list can say where it ends, the last page's.
/// </summary>
public sealed record CursorList<T>(IReadOnlyList<T> Items, int Total, string? After, string? Next, string? Last = null);

/// <summary>A confirmation before an action: what will happen, and the form that does it.</summary>
public sealed record ConfirmModel(
    ConsoleCaller Caller,
    string Title,
    string Question,
    string Action,
    string ConfirmLabel,
    string Back,
    bool Dangerous,
    IReadOnlyList<KeyValuePair<string, string>> Details,
    IReadOnlyList<KeyValuePair<string, string>> Fields,
    IReadOnlyList<MigrationStep>? Plan = null,
    string? Error = null,
    bool CanConfirm = true);

public sealed record DefinitionsModel(ConsoleCaller Caller, IReadOnlyList<DefinitionSummary> Definitions);

public sealed record DefinitionModel(
    ConsoleCaller Caller, string Name, CursorList<DefinitionRecord> Versions, DefinitionRecord Selected, int Latest, string? Diagram, string Json,
    int? Compare, IReadOnlyList<DiffRow>? Diff)
{
    /// <summary>This page with the version list at <paramref name="after"/> (the first page when null), the same versions shown.</summary>
    public string WithVersions(string? after) => ConsolePaths.Definition(Name, Selected.Version, Compare, after);
}

public sealed record DeadLettersModel(ConsoleCaller Caller, Page<SignalMessage> Page, string? Notice);

public sealed record TasksModel(ConsoleCaller Caller, HumanTaskStatus? Status, Page<HumanTask> Page, IReadOnlySet<Guid> Workable, string? Notice, string? Error);

/// <summary>A subscription form's fields as typed: events and definitions each a list separated by commas or spaces.</summary>
public sealed record SubscriptionForm(string? Name, string? Endpoint, string? Events, string? Definitions, string? MaxEventsPerBatch = null)
{
    public static readonly SubscriptionForm Empty = new(null, null, null, null);

    public static SubscriptionForm Of(Subscription s) => new(s.Name, s.Endpoint, string.Join(", ", s.Events), string.Join(", ", s.Definitions),
        s.MaxEventsPerBatch.ToString(System.Globalization.CultureInfo.InvariantCulture));

    /// <summary>
    /// What the API would be sent; an empty list stays empty, so the API's own checks say what is missing. An empty batch
    /// size is the default (1); one that is not a whole number is sent as 0, which the API's check refuses in its words.
    /// </summary>
    public SubscriptionSpec Spec => new(Name?.Trim(), Endpoint?.Trim(), Split(Events), Split(Definitions), BatchSize(MaxEventsPerBatch));

    private static int? BatchSize(string? text) =>
        string.IsNullOrWhiteSpace(text) ? null
        : int.TryParse(text.Trim(), System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var size) ? size
        : 0;

    private static string[] Split(string? list) =>
        (list ?? "").Split([',', ' ', '\n', '\r', '\t'], StringSplitOptions.RemoveEmptyEntries);
}

/// <summary>The subscription list with its create form; <paramref name="Secret"/> is the secret of the one just created, shown once.</summary>
public sealed record SubscriptionsModel(
    ConsoleCaller Caller, CursorList<Subscription> Subscriptions, SubscriptionForm Form, Subscription? Created, string? Secret, string? Notice,
    string? Error);

/// <summary>One subscription with its edit form and actions; <paramref name="Secret"/> is a just-rotated secret, shown once.</summary>
public sealed record SubscriptionModel(ConsoleCaller Caller, Subscription Subscription, SubscriptionForm Form, string? Secret, string? Notice, string? Error);

/// <summary>A page of a subscription's delivery log, newest first.</summary>
public sealed record DeliveriesModel(ConsoleCaller Caller, Subscription Subscription, CursorList<EventDelivery> Deliveries, string? Notice);

/// <summary>
/// The schedule list with its create form. <paramref name="Problems"/> are what the API (or the form's own reading)
/// found wrong with the form, each at its field's JSON path; <paramref name="Error"/> says them all in one line.
/// </summary>
public sealed record SchedulesModel(
    ConsoleCaller Caller, CursorList<ScheduleView> Schedules, ScheduleForm Form, IReadOnlyList<Diagnostic> Problems, string? Notice, string? Error);

/// <summary>One schedule with its edit form, its actions and its backfill range as typed.</summary>
public sealed record ScheduleModel(
    ConsoleCaller Caller, ScheduleView Schedule, ScheduleForm Form, IReadOnlyList<Diagnostic> Problems, string? Notice, string? Error,
    string? BackfillFrom = null, string? BackfillTo = null);

public sealed record MessageModel(ConsoleCaller? Caller, string Title, string Message);

public sealed record SignInModel(string ReturnTo, string? Message, bool TokensAccepted, bool SingleSignOn);
