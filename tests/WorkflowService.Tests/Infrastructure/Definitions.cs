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
