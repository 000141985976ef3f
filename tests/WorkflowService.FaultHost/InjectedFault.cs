namespace WorkflowService.FaultHost;

/// <summary>How one store call fails.</summary>
internal enum InjectedFault
{
    /// <summary>Not at all: the call goes through.</summary>
    None,

    /// <summary>At once, before anything reaches the database (a connection that broke before the command went out).</summary>
    FailBefore,

    /// <summary>After hanging for the configured delay, before anything reaches the database (a command that timed out unsent).</summary>
    TimeoutBefore,

    /// <summary>The write commits, then the caller is told it failed (the answer to the commit was lost).</summary>
    CommitThenThrow,

    /// <summary>The write commits, then the caller waits the configured delay and is told it timed out.</summary>
    CommitThenTimeout,
}
