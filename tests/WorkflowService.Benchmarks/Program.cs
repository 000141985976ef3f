using System.Diagnostics;
using System.Globalization;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;

// A load client for the running service: the signal-roundtrip workflow (start → wait for "go" → assign → complete),
// measured per phase from the client's side over HTTP. Usage:
//   dotnet run -c Release --project tests/WorkflowService.Benchmarks -- [--url http://localhost:5080] [--ops 16] [--concurrency 1]
var url = Arg("--url", "http://localhost:5080");
var ops = int.Parse(Arg("--ops", "16"), CultureInfo.InvariantCulture);
var concurrency = int.Parse(Arg("--concurrency", "1"), CultureInfo.InvariantCulture);
var warmup = int.Parse(Arg("--warmup", "20"), CultureInfo.InvariantCulture);

using var http = new HttpClient(new SocketsHttpHandler { MaxConnectionsPerServer = Math.Max(concurrency * 2, 4) })
{
    BaseAddress = new Uri(url),
    Timeout = TimeSpan.FromSeconds(60),
};

var definition = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "signal-roundtrip.json"));
using (var publish = await http.PostAsync("/definitions", new StringContent(definition, Encoding.UTF8, "application/json")))
{
    publish.EnsureSuccessStatusCode();
}

for (var i = 0; i < warmup; i++)
{
    await RoundtripAsync();
}

var results = new Sample[ops];
var next = -1;
var clock = Stopwatch.StartNew();
await Task.WhenAll(Enumerable.Range(0, concurrency).Select(async _ =>
{
    int index;
    while ((index = Interlocked.Increment(ref next)) < ops)
    {
        results[index] = await RoundtripAsync();
    }
}));
clock.Stop();

var failures = results.Count(r => !r.Ok);
Console.WriteLine($"signal-roundtrip: ops {ops}, concurrency {concurrency}, duration {clock.Elapsed.TotalMilliseconds:F0} ms, " +
                  $"throughput {ops / clock.Elapsed.TotalSeconds:F1}/s, failures {failures}");
Report("end-to-end", results.Select(r => r.EndToEnd));
Report("start", results.Select(r => r.Start));
Report("signalPublish", results.Select(r => r.Publish));
Report("signalToCompletion", results.Select(r => r.ToCompletion));
return failures == 0 ? 0 : 1;

async Task<Sample> RoundtripAsync()
{
    var t0 = Stopwatch.GetTimestamp();
    using var start = await http.PostAsJsonAsync("/instances", new { definition = "signal-roundtrip" });
    var id = (await start.Content.ReadFromJsonAsync<JsonObject>())!["id"]!.GetValue<string>();
    var t1 = Stopwatch.GetTimestamp();
    using var signal = await http.PostAsJsonAsync($"/instances/{id}/signals", new { name = "go", payload = new { value = 1 } });
    var t2 = Stopwatch.GetTimestamp();
    var done = await http.GetFromJsonAsync<JsonObject>($"/instances/{id}?waitFor=Completed&timeout=30");
    var t3 = Stopwatch.GetTimestamp();
    var ok = start.IsSuccessStatusCode && signal.IsSuccessStatusCode && done!["status"]!.GetValue<string>() == "Completed";
    return new Sample(ok, Ms(t0, t3), Ms(t0, t1), Ms(t1, t2), Ms(t2, t3));
}

static double Ms(long from, long to) => Stopwatch.GetElapsedTime(from, to).TotalMilliseconds;

static void Report(string phase, IEnumerable<double> values)
{
    var sorted = values.Order().ToArray();
    double P(double p) => sorted[Math.Clamp((int)Math.Ceiling(p * sorted.Length) - 1, 0, sorted.Length - 1)];
    Console.WriteLine($"  {phase,-20} avg {sorted.Average(),8:F2}  p50 {P(0.50),8:F2}  p95 {P(0.95),8:F2}  p99 {P(0.99),8:F2}  max {sorted[^1],8:F2} ms");
}

string Arg(string name, string fallback)
{
    var i = Array.IndexOf(args, name);
    return i >= 0 && i + 1 < args.Length ? args[i + 1] : fallback;
}

internal readonly record struct Sample(bool Ok, double EndToEnd, double Start, double Publish, double ToCompletion);
