using WorkflowService.FaultRunner;
using WorkflowService.Testing;

namespace WorkflowService.UnitTests.Faults;

/// <summary>
/// docs/reliability.md as the fault runner writes it: its header (what the table is, each fault and where it applies, how
/// to read and regenerate it) is the committed code's, its results cover the faults that code runs, and a row that did
/// not run is never shown or counted as a pass. CI runs these, so a header edited by hand, or a catalogue changed
/// without regenerating the file, fails it.
/// </summary>
public sealed class FaultReportTests
{
    private static string Committed =>
        File.ReadAllText(Path.Combine(RepositoryRoot.Find(), "docs", "reliability.md")).ReplaceLineEndings("\n");

    [Fact]
    public void The_committed_header_is_what_the_runner_writes_for_the_committed_code()
    {
        var header = FaultReport.Header().ReplaceLineEndings("\n");
        var text = Committed;
        var end = text.IndexOf("\n" + FaultReport.ResultsHeading + "\n", StringComparison.Ordinal);

        Assert.True(end > 0, $"docs/reliability.md has no \"{FaultReport.ResultsHeading}\" line: regenerate it with `{FaultReport.RegenerateCommand}`");
        Assert.Equal(header, text[..(end + FaultReport.ResultsHeading.Length + 2)]);
    }

    [Fact]
    public void The_committed_results_have_one_row_for_each_fault_that_applies_on_each_backend_they_cover()
    {
        var rows = ResultRows(Committed);
        var backends = rows.Select(r => r.Backend).Distinct().ToList();
        var expected = backends
            .SelectMany(b => FaultCatalog.All.Where(s => s.NotApplicable(b) is null).Select(s => (Fault: s.Name, Backend: b)))
            .Order().ToList();

        Assert.Contains("sqlite", backends);
        Assert.Contains("postgres", backends);
        Assert.Equal(expected, rows.Order().ToList());
    }

    [Fact]
    public void A_row_that_did_not_run_is_shown_not_run_and_never_counted_as_passed()
    {
        var output = Directory.CreateTempSubdirectory("wf-fault-report-").FullName;
        try
        {
            var readOnlyFile = FaultCatalog.All.Single(s => s.TurnsItsDiskReadOnly);
            FaultReport.Save(new FaultRow
            {
                Number = readOnlyFile.Number,
                Fault = readOnlyFile.Name,
                Title = readOnlyFile.Title,
                Backend = "sqlite",
                Tier = "short",
                Date = "2026-11-28",
                Repeat = "faults --only read-only-file",
                NotRun = "not run on this machine: no free loop device (losetup -f)",
                Verdict = "not run",
            }, output);

            var text = File.ReadAllText(FaultReport.Render(output));
            var row = Assert.Single(text.Split('\n'), l => l.StartsWith("| ", StringComparison.Ordinal) && l.Contains(readOnlyFile.Name, StringComparison.Ordinal)
                && l.Contains("| sqlite |", StringComparison.Ordinal));

            Assert.Contains("**not run**: not run on this machine: no free loop device", row, StringComparison.Ordinal);
            Assert.DoesNotContain("pass", row, StringComparison.Ordinal);
            Assert.Contains("1 rows: 0 passed, 0 failed, 1 not run", text, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(output, recursive: true);
        }
    }

    /// <summary>(fault, backend) of each row of the results table.</summary>
    private static List<(string Fault, string Backend)> ResultRows(string text)
    {
        var results = text[text.IndexOf("\n" + FaultReport.ResultsHeading + "\n", StringComparison.Ordinal)..];
        return [.. results.Split('\n')
            .Where(l => l.StartsWith("| ", StringComparison.Ordinal) && !l.StartsWith("| #", StringComparison.Ordinal) && !l.StartsWith("| -", StringComparison.Ordinal))
            .Select(l => l.Split('|', StringSplitOptions.TrimEntries))
            .Select(cells => (cells[2], cells[3]))];
    }
}
