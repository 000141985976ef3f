using Rebus.Bus;
using Rebus.Handlers;
using Rebus.Sagas;
using WorkflowService.Testing.RebusPeer;

namespace WorkflowService.RebusPeer;

/// <summary>
/// The signal-roundtrip workflow as a Rebus saga: <see cref="StartRoundtrip"/> creates it waiting for "go" and replies
/// once it is stored; <see cref="Go"/> assigns the signal's value, completes it (Rebus deletes completed saga data) and
/// replies <see cref="RoundtripCompleted"/> to the client's queue.
/// </summary>
public sealed class RoundtripSaga(IBus bus) : Saga<RoundtripData>, IAmInitiatedBy<StartRoundtrip>, IHandleMessages<Go>
{
    protected override void CorrelateMessages(ICorrelationConfig<RoundtripData> config)
    {
        config.Correlate<StartRoundtrip>(m => m.Id, d => d.RoundtripId);
        config.Correlate<Go>(m => m.Id, d => d.RoundtripId);
    }

    public async Task Handle(StartRoundtrip message)
    {
        ArgumentNullException.ThrowIfNull(message);
        if (!IsNew)
        {
            // A redelivered start (the reply's commit failed after the saga's): answer again, change nothing.
            await bus.Reply(new RoundtripStarted(message.Id));
            return;
        }

        Data.RoundtripId = message.Id;
        Data.N = message.N;
        Data.Status = RoundtripData.Waiting;
        // Sent when the handler's transaction commits, after the saga data is stored: the client's go never finds no saga.
        await bus.Reply(new RoundtripStarted(message.Id));
    }

    public async Task Handle(Go message)
    {
        ArgumentNullException.ThrowIfNull(message);
        Data.Result = message.Value;
        Data.Status = RoundtripData.Completed;
        MarkAsComplete();
        await bus.Reply(new RoundtripCompleted(message.Id, message.Value));
    }
}

/// <summary>The saga's stored state: the roundtrip's id (its correlation), the start's input, its status and result.</summary>
public sealed class RoundtripData : ISagaData
{
    public const string Waiting = "Waiting";
    public const string Completed = "Completed";

    public Guid Id { get; set; }
    public int Revision { get; set; }
    public Guid RoundtripId { get; set; }
    public int N { get; set; }
    public string Status { get; set; } = string.Empty;
    public int? Result { get; set; }
}
