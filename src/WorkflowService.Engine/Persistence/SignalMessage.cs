namespace WorkflowService.Engine.Persistence;

/// <summary>A signal for one instance: external event, callback, task completion or timer. The durable queue entry.</summary>
public sealed class SignalMessage
{
    /// <summary>Names the engine reserves for its own signals start with this prefix.</summary>
    public const string SystemPrefix = "$";
    public const string StartSignal = "$start";
    public const string TimerSignal = "$timer";
    public const string TimeoutSignal = "$timeout";
    public const string TaskSignal = "$task";
    public const string CallOutSignal = "$http";
    public const string SubWorkflowSignal = "$subflow";
    public const string ChildEndedSignal = "$child";

    public Guid Id { get; set; }
    public Guid InstanceId { get; set; }
    public required string Name { get; set; }
    public string? PayloadJson { get; set; }

    /// <summary>
    /// The payload as readers see it (the API, the console): a call-out's request with its header values, query values
    /// and secrets redacted (<see cref="Execution.CallOutRequest.Redacted"/>); any other signal's payload as it is.
    /// </summary>
    public string? ShownPayloadJson => Name == CallOutSignal && PayloadJson is { } payload ? Execution.CallOutRequest.Redacted(payload) : PayloadJson;
    public SignalStatus Status { get; set; }
    /// <summary>When the signal may be handled, in Unix milliseconds by the store's clock.</summary>
    public long DueAtMs { get; set; }
    public int Attempts { get; set; }
    public string? LeaseOwner { get; set; }
    /// <summary>Set anew by every claim; a commit that names an older token lost its lease.</summary>
    public long LeaseToken { get; set; }
    public long? LeaseUntilMs { get; set; }
    public string? LastError { get; set; }
    public string? IdempotencyKey { get; set; }
    /// <summary>Who sent it (for a task's completion: who completed it); the history events it causes record this actor.</summary>
    public string? Actor { get; set; }
    /// <summary>
    /// What the signal is about besides its instance, as stored: the human task a $task signal completes, or the parent's
    /// wait a $child signal ends. Read it as <see cref="TaskId"/> or <see cref="ParentWaitId"/>.
    /// </summary>
    public Guid? SubjectId { get; set; }

    /// <summary>The human task this signal completes ($task); null on any other signal.</summary>
    public Guid? TaskId => Name == TaskSignal ? SubjectId : null;

    /// <summary>
    /// On a $child signal, the parent's wait it ends (the id of the parent's $subflow signal, which started the child);
    /// null on any other signal.
    /// </summary>
    public Guid? ParentWaitId => Name == ChildEndedSignal ? SubjectId : null;
    public DateTime CreatedAt { get; set; }
    public DateTime? HandledAt { get; set; }

    /// <summary>The longest W3C traceparent kept (version 00 is 55 characters; later versions may append fields).</summary>
    public const int TraceParentMaxLength = 128;

    /// <summary>
    /// The W3C trace context (a <c>traceparent</c> value) of whatever sent the signal: the caller's request, or the run that
    /// scheduled it. The run that handles the signal, later and perhaps on another node, continues that trace. A new
    /// signal takes the trace it is sent in (<see cref="Runtime.EngineTelemetry.CurrentTraceParent"/>): set where a caller's
    /// signal is accepted, and by <see cref="Runtime.WaitPointWriter"/> for the signals a wait point queues. Null when
    /// nothing was traced.
    /// </summary>
    public string? TraceParent { get; set; }

    public bool IsSystem => Name.StartsWith(SystemPrefix, StringComparison.Ordinal);

    /// <summary>The same signal carrying another payload (a call-out's response in place of its request).</summary>
    public SignalMessage WithPayload(string? payloadJson)
    {
        var copy = (SignalMessage)MemberwiseClone();
        copy.PayloadJson = payloadJson;
        return copy;
    }
}
