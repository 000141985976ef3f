namespace WorkflowService.FaultRunner;

/// <summary>
/// The fault runs' poison workflow (Definitions/fault-poison.json): it waits for "go", and the step after the wait always
/// throws, so its signal is retried to the configured attempts and dead-lettered, and its instance faulted.
/// </summary>
internal static class PoisonWorkflows
{
    public const string Definition = "fault-poison";
    public const string DefinitionFile = "tests/WorkflowService.Benchmarks/Definitions/fault-poison.json";

    /// <summary>Starts <paramref name="count"/> poison workflows and sends each its "go", one after the other; their ids and their signals' ids.</summary>
    public static async Task<List<(Guid Instance, Guid Signal)>> StartAsync(FaultClient client, int count, CancellationToken cancellationToken)
    {
        var poison = new List<(Guid Instance, Guid Signal)>();
        for (var i = 0; i < count; i++)
        {
            var id = await client.StartAsync(Definition, new { i }, $"poison-start-{i}", cancellationToken);
            poison.Add((id, await client.SignalAsync(id, "go", new { i }, $"poison-go-{i}", cancellationToken)));
        }

        return poison;
    }
}
