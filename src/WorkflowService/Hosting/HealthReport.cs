using System.Text.Json;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace WorkflowService.Hosting;

/// <summary>/health/ready's answer: the overall status, then each check with its description (e.g. "authentication is off").</summary>
internal static class HealthReport
{
    public static Task WriteAsync(HttpContext context, Microsoft.Extensions.Diagnostics.HealthChecks.HealthReport report)
    {
        context.Response.ContentType = "application/json";
        return context.Response.WriteAsync(JsonSerializer.Serialize(new
        {
            status = report.Status.ToString(),
            checks = report.Entries.ToDictionary(e => e.Key, e => new { status = e.Value.Status.ToString(), description = e.Value.Description }),
        }));
    }
}
