using System.Globalization;
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
    IReadOnlyList<HistoryEvent> History,
    int HistoryTotal,
    IReadOnlyList<SignalMessage> Signals,
    int SignalsTotal,
    IReadOnlyList<HumanTask> Tasks,
    Page<WorkflowInstance> Children,
    IReadOnlyList<int> Versions,
    string? Notice)
{
    /// <summary>The most history events, and signals, an instance page lists (the newest).</summary>
    public const int MaxShown = 500;
}

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
    ConsoleCaller Caller, string Name, IReadOnlyList<DefinitionRecord> Versions, DefinitionRecord Selected, string? Diagram, string Json,
    int? Compare, IReadOnlyList<DiffRow>? Diff);

public sealed record DeadLettersModel(ConsoleCaller Caller, Page<SignalMessage> Page, string? Notice);

public sealed record TasksModel(ConsoleCaller Caller, HumanTaskStatus? Status, Page<HumanTask> Page, IReadOnlySet<Guid> Workable, string? Notice, string? Error);

public sealed record MessageModel(ConsoleCaller? Caller, string Title, string Message);

public sealed record SignInModel(string ReturnTo, string? Message, bool TokensAccepted, bool SingleSignOn);
