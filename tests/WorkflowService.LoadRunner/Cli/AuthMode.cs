namespace WorkflowService.LoadRunner.Cli;

/// <summary>How the runner authenticates to the service it starts (--auth).</summary>
internal enum AuthMode
{
    /// <summary>Default: a random API key per run (role admin); the service gets its hash, every request carries it in X-Api-Key.</summary>
    ApiKey,

    /// <summary>The service runs with Authentication__Mode=None and no request carries a key: to measure what authentication costs.</summary>
    None,
}
