using System.Globalization;
using Microsoft.Diagnostics.Tracing.Etlx;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

// Usage: AllocationReport TRACE.nettrace [REQUESTS_PER_OPERATION]
// The trace holds the runtime's GC events at verbose level (an AllocationTick about every 100 KB, with its call stack) and
// ASP.NET Core's hosting events (one Request/Start per request), which give the operation count.
if (args.Length < 1)
{
    await Console.Error.WriteLineAsync("usage: AllocationReport TRACE.nettrace [REQUESTS_PER_OPERATION (default 3)]");
    return 2;
}

var requestsPerOperation = args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 3;
using var log = new TraceLog(TraceLog.CreateFromEventPipeDataFile(args[0]));
var byType = new Dictionary<string, long>(StringComparer.Ordinal);
var byFirstOwnFrame = new Dictionary<string, long>(StringComparer.Ordinal);
var byFrame = new Dictionary<string, long>(StringComparer.Ordinal);
long total = 0;
long requests = 0;
foreach (var traceEvent in log.Events)
{
    if (traceEvent.ProviderName == "Microsoft.AspNetCore.Hosting" && traceEvent.EventName == "Request/Start")
    {
        requests++;
        continue;
    }

    if (traceEvent is not GCAllocationTickTraceData tick)
    {
        continue;
    }

    var amount = tick.AllocationAmount64;
    total += amount;
    Add(byType, tick.TypeName ?? "?", amount);
    var seen = new HashSet<string>(StringComparer.Ordinal);
    string? firstOwn = null;
    for (var frame = traceEvent.CallStack(); frame is not null; frame = frame.Caller)
    {
        var module = frame.CodeAddress.ModuleName;
        var method = frame.CodeAddress.FullMethodName;
        var name = string.IsNullOrEmpty(method) ? module + "!?" : module + "!" + method;
        name = name.Length > 160 ? name[..160] : name;
        if (seen.Add(name))
        {
            Add(byFrame, name, amount);
        }

        if (firstOwn is null && !string.IsNullOrEmpty(method) && !IsBaseLibrary(module))
        {
            firstOwn = name;
        }
    }

    Add(byFirstOwnFrame, firstOwn ?? "?", amount);
}

if (requests == 0 || total == 0)
{
    await Console.Error.WriteLineAsync("the trace has no requests or no allocation ticks: collect Microsoft-Windows-DotNETRuntime:0x1:5 and Microsoft.AspNetCore.Hosting");
    return 1;
}

var operations = requests / requestsPerOperation;
Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
    $"{requests:N0} requests, {operations:N0} operations ({requestsPerOperation} requests each); sampled allocations {total / 1048576.0:N1} MB, {total / operations / 1024:N1} KB per operation"));
Print("by type", byType, 30);
Print("by the first frame outside the base library", byFirstOwnFrame, 40);
Print("by frame (inclusive)", byFrame, 80);
return 0;

void Print(string title, Dictionary<string, long> table, int count)
{
    Console.WriteLine();
    Console.WriteLine("## " + title);
    foreach (var (key, value) in table.OrderByDescending(p => p.Value).Take(count))
    {
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{value * 100.0 / total,6:N1} % {value / operations / 1024,8:N2} KB/op  {key}"));
    }
}

static void Add(Dictionary<string, long> table, string key, long amount) =>
    table[key] = table.GetValueOrDefault(key) + amount;

static bool IsBaseLibrary(string module) =>
    module.StartsWith("System.Private.CoreLib", StringComparison.Ordinal) || module.StartsWith("System.Collections", StringComparison.Ordinal)
    || module.StartsWith("System.Linq", StringComparison.Ordinal) || module.StartsWith("System.Runtime", StringComparison.Ordinal)
    || module.StartsWith("System.Memory", StringComparison.Ordinal);
