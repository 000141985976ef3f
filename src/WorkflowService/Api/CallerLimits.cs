using System.Collections.Concurrent;
using System.ComponentModel.DataAnnotations;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Threading.RateLimiting;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Configuration;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>Per-caller request rates and the node's cap on waiting requests ("RateLimiting" section).</summary>
public sealed class RateLimitingOptions
{
    public const string Section = "RateLimiting";

    /// <summary>Off only for a node behind a gateway that limits callers itself.</summary>
    public bool Enabled { get; set; } = true;

    /// <summary>Requests a caller earns per <see cref="Period"/> (a token bucket per caller: the actor, else the client address).</summary>
    [Range(1, 1_000_000)]
    public int PermitsPerPeriod { get; set; } = 500;

    [Range(typeof(TimeSpan), "00:00:00.010", "01:00:00")]
    public TimeSpan Period { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Requests a caller may make at once after a quiet spell (the bucket's size).</summary>
    [Range(1, 10_000_000)]
    public int Burst { get; set; } = 1000;

    /// <summary>
    /// Long-polls (GET /instances/{id}?waitFor=…) one node holds at once; more get 503 with Retry-After. A waiting
    /// long-poll costs its connection and a little memory, no database work of its own (all of a node's long-polls are
    /// rechecked with one read a period).
    /// </summary>
    [Range(1, 100_000)]
    public int MaxConcurrentLongPolls { get; set; } = 5000;

    /// <summary>
    /// Long-polls one caller (as the rate limit counts callers) may hold at once on a node; more get 429 with
    /// Retry-After, so that one caller cannot take every slot of the node from the others. Off with <see cref="Enabled"/>.
    /// </summary>
    [Range(1, 100_000)]
    public int MaxLongPollsPerCaller { get; set; } = 1000;
}

/// <summary>
/// The node's count of open long-polls, bounded by <see cref="RateLimitingOptions.MaxConcurrentLongPolls"/> in all and
/// by <see cref="RateLimitingOptions.MaxLongPollsPerCaller"/> for each caller.
/// </summary>
public sealed class LongPollGate(IOptions<RateLimitingOptions> options)
{
    private readonly ConcurrentDictionary<string, int> _byCaller = new(StringComparer.Ordinal);
    private int _inUse;

    public int InUse => Volatile.Read(ref _inUse);

    /// <summary>The long-polls <paramref name="caller"/> holds now.</summary>
    public int HeldBy(string caller) => _byCaller.TryGetValue(caller, out var held) ? held : 0;

    /// <summary>
    /// A slot, or null (with the limit that refused it) when the node, or <paramref name="caller"/>, holds as many
    /// long-polls as it may; dispose the slot to give it back.
    /// </summary>
    public IDisposable? TryEnter(string caller, out LongPollRefusal refusal)
    {
        var limits = options.Value;
        if (Interlocked.Increment(ref _inUse) > limits.MaxConcurrentLongPolls)
        {
            Interlocked.Decrement(ref _inUse);
            refusal = LongPollRefusal.NodeFull;
            return null;
        }

        // With caller limits off (a gateway limits callers), only the node's cap applies; the count is kept all the same.
        if (_byCaller.AddOrUpdate(caller, 1, static (_, held) => held + 1) > limits.MaxLongPollsPerCaller && limits.Enabled)
        {
            Leave(caller);
            refusal = LongPollRefusal.CallerFull;
            return null;
        }

        refusal = LongPollRefusal.None;
        return new Slot(this, caller);
    }

    private void Leave(string caller)
    {
        Interlocked.Decrement(ref _inUse);
        // Decrement, and drop the caller's entry when it reaches zero (unless it was taken again meanwhile).
        while (_byCaller.TryGetValue(caller, out var held))
        {
            if (held <= 1 ? _byCaller.TryRemove(new KeyValuePair<string, int>(caller, held)) : _byCaller.TryUpdate(caller, held - 1, held))
            {
                return;
            }
        }
    }

    private sealed class Slot(LongPollGate gate, string caller) : IDisposable
    {
        private int _released;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _released, 1) == 0)
            {
                gate.Leave(caller);
            }
        }
    }
}

/// <summary>Why <see cref="LongPollGate.TryEnter"/> gave no slot.</summary>
public enum LongPollRefusal
{
    None,
    /// <summary>The node holds as many long-polls as it may (503).</summary>
    NodeFull,
    /// <summary>The caller holds as many long-polls as one caller may (429).</summary>
    CallerFull,
}

internal static class CallerLimits
{
    /// <summary>Probes are never limited: an orchestrator must always learn whether the node is alive.</summary>
    private static bool IsProbe(HttpContext context) => context.Request.Path.StartsWithSegments("/health", StringComparison.Ordinal);

    public static IServiceCollection AddCallerLimits(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddSettings<RateLimitingOptions>(configuration.GetSection(RateLimitingOptions.Section));
        services.AddSingleton<LongPollGate>();
        services.AddRateLimiter(_ => { });
        services.AddOptions<RateLimiterOptions>().Configure<IOptions<RateLimitingOptions>>((o, settings) =>
        {
            var limits = settings.Value;
            o.RejectionStatusCode = StatusCodes.Status429TooManyRequests;
            o.GlobalLimiter = PartitionedRateLimiter.Create<HttpContext, string>(context =>
                !limits.Enabled || IsProbe(context)
                    ? RateLimitPartition.GetNoLimiter(string.Empty)
                    : RateLimitPartition.GetTokenBucketLimiter(CallerKey(context), _ => new TokenBucketRateLimiterOptions
                    {
                        TokenLimit = limits.Burst,
                        TokensPerPeriod = limits.PermitsPerPeriod,
                        ReplenishmentPeriod = limits.Period,
                        QueueLimit = 0,
                        AutoReplenishment = true,
                    }));
            o.OnRejected = (rejected, cancellationToken) =>
            {
                var retryAfter = rejected.Lease.TryGetMetadata(MetadataName.RetryAfter, out var wait) ? wait : limits.Period;
                var seconds = Math.Max(1, (int)Math.Ceiling(retryAfter.TotalSeconds));
                return WriteTooBusyAsync(rejected.HttpContext, StatusCodes.Status429TooManyRequests, "Too many requests",
                    $"This caller sent more than {limits.PermitsPerPeriod} requests per {limits.Period.TotalSeconds.ToString(CultureInfo.InvariantCulture)} s; retry after {seconds} s.",
                    seconds);
            };
        });
        return services;
    }

    /// <summary>
    /// Who a limit counts against: the authenticated caller (a key and a token user of the same name are two callers),
    /// else the client's address (behind a proxy, the one X-Forwarded-For names when ASPNETCORE_FORWARDEDHEADERS_ENABLED
    /// is set), an IPv6 client by its /64 block.
    /// </summary>
    internal static string CallerKey(HttpContext context) =>
        context.User.Actor() is not { } actor ? $"address:{Network(context.Connection.RemoteIpAddress)}"
        : context.User.Identities.Any(i => i.AuthenticationType == ApiKeyHandler.SchemeName) ? $"key:{actor}"
        : $"user:{actor}";

    /// <summary>
    /// The block one client holds: an IPv4 address itself; for IPv6 its /64, the smallest block a subscriber is given,
    /// so that one client cannot take a fresh bucket with each of its 2^64 addresses.
    /// </summary>
    private static string Network(IPAddress? address)
    {
        if (address is null)
        {
            return "unknown";
        }

        if (address.IsIPv4MappedToIPv6)
        {
            address = address.MapToIPv4();
        }

        if (address.AddressFamily != AddressFamily.InterNetworkV6)
        {
            return address.ToString();
        }

        Span<byte> bytes = stackalloc byte[16];
        address.TryWriteBytes(bytes, out _);
        bytes[8..].Clear();
        return new IPAddress(bytes).ToString() + "/64";
    }

    /// <summary>A 429 or 503 problem with Retry-After, written by the problem-details service like every other answer.</summary>
    public static async ValueTask WriteTooBusyAsync(HttpContext context, int status, string title, string detail, int retryAfterSeconds)
    {
        context.Response.StatusCode = status;
        context.Response.Headers.RetryAfter = retryAfterSeconds.ToString(CultureInfo.InvariantCulture);
        await context.RequestServices.GetRequiredService<IProblemDetailsService>().WriteAsync(new ProblemDetailsContext
        {
            HttpContext = context,
            ProblemDetails = { Status = status, Title = title, Detail = detail },
        }).ConfigureAwait(false);
    }
}
