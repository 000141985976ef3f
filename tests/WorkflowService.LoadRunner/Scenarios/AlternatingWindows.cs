namespace WorkflowService.LoadRunner.Scenarios;

/// <summary>
/// The shape of a comparison a noisy machine cannot fake: windows of each variant taken in turns, A B then B A, so that
/// whatever the machine does meanwhile falls on every variant alike, and each variant's figure is the median of its windows.
/// Used by <see cref="InterleavedRun"/> (service variants) and <see cref="SchedulesBenchmark"/> (addressing by key or id).
/// </summary>
internal static class AlternatingWindows
{
    /// <summary>Every window in order: <paramref name="rounds"/> rounds of every variant, each round reversing the one before it.</summary>
    public static IEnumerable<(int Round, T Variant)> Turns<T>(IReadOnlyList<T> variants, int rounds)
    {
        for (var round = 0; round < rounds; round++)
        {
            // A B, then B A: neither variant always follows the other.
            var order = round % 2 == 0 ? variants : variants.Reverse();
            foreach (var variant in order)
            {
                yield return (round + 1, variant);
            }
        }
    }

    public static double Median(IEnumerable<double> values)
    {
        var sorted = values.Order().ToArray();
        return sorted.Length == 0 ? double.NaN : sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[(sorted.Length / 2) - 1] + sorted[sorted.Length / 2]) / 2;
    }
}
