namespace WorkflowService.Tests.Infrastructure;

/// <summary>Small definitions the tests share; each test publishes under a unique name.</summary>
public static class Definitions
{
    public static string Unique(string prefix) => $"{prefix}-{Guid.NewGuid():N}"[..Math.Min(prefix.Length + 13, 100)];

    public static string SignalRoundtrip(string name) => $$"""
        {
          "name": "{{name}}",
          "steps": [
            { "id": "wait-go", "type": "waitForSignal", "signal": "go", "output": "go" },
            { "id": "assign", "type": "assign", "set": { "result": "vars.go === null ? null : vars.go.value" } },
            { "id": "done", "type": "complete", "result": "({ result: vars.result })" }
          ]
        }
        """;

    public static string TwoWaits(string name) => $$"""
        {
          "name": "{{name}}",
          "steps": [
            { "id": "wait-a", "type": "waitForSignal", "signal": "a", "output": "a" },
            { "id": "wait-b", "type": "waitForSignal", "signal": "b", "output": "b" },
            { "id": "done", "type": "complete", "result": "({ a: vars.a, b: vars.b })" }
          ]
        }
        """;

    /// <summary>
    /// Waits for "tick" <paramref name="ticks"/> times in a loop, then completes: a history of many wait points, each
    /// commit several events (one stored row), and a ledger of as many signals.
    /// </summary>
    public static string Ticks(string name, int ticks) => $$"""
        {
          "name": "{{name}}",
          "steps": [
            { "id": "init", "type": "assign", "set": { "n": "0" } },
            { "id": "wait-tick", "type": "waitForSignal", "signal": "tick", "output": "tick" },
            { "id": "count", "type": "assign", "set": { "n": "vars.n + 1" } },
            { "id": "again", "type": "decision", "branches": [ { "when": "vars.n < {{ticks}}", "next": "wait-tick" } ], "otherwise": "done" },
            { "id": "done", "type": "complete", "result": "({ n: vars.n })" }
          ]
        }
        """;

    /// <summary>Waits for "go", then fails every attempt of its next step (a function that does not exist): a dead letter on demand.</summary>
    public static string FaultsAfterGo(string name) => $$"""
        {
          "name": "{{name}}",
          "steps": [
            { "id": "wait", "type": "waitForSignal", "signal": "go", "output": "go" },
            { "id": "boom", "type": "assign", "set": { "x": "noSuchFunction()" } },
            { "id": "done", "type": "complete" }
          ]
        }
        """;
}
