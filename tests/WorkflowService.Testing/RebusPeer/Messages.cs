namespace WorkflowService.Testing.RebusPeer;

// The signal-roundtrip workflow's messages, shared by the saga (this process) and the benchmark runner's client endpoint:
// Rebus names a message's type in its headers, so both sides use these very types.

/// <summary>Starts a roundtrip: creates the saga, which then waits for <see cref="Go"/>.</summary>
public sealed record StartRoundtrip(Guid Id, int N);

/// <summary>The reply to <see cref="StartRoundtrip"/>: the saga is stored and waiting (what our start request's 2xx says).</summary>
public sealed record RoundtripStarted(Guid Id);

/// <summary>The "go" signal: its value is assigned and the saga completes.</summary>
public sealed record Go(Guid Id, int Value);

/// <summary>The reply to <see cref="Go"/>: the saga completed with the signal's value as its result.</summary>
public sealed record RoundtripCompleted(Guid Id, int Result);
