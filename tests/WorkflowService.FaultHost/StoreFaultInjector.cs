using System.Collections.Concurrent;
using System.Net;
using Microsoft.Data.Sqlite;
using MongoDB.Driver;
using MongoDB.Driver.Core.Clusters;
using MongoDB.Driver.Core.Connections;
using MongoDB.Driver.Core.Servers;
using Microsoft.Extensions.Options;
using Npgsql;
using WorkflowService.Hosting;

namespace WorkflowService.FaultHost;

/// <summary>
/// Decides, call by call, whether and how a decorated store call fails (<see cref="InjectedFault"/>), runs it that way,
/// and counts what it did. The failure it throws is the one the store's own driver throws when the database breaks off
/// (a transient <see cref="NpgsqlException"/> for PostgreSQL, a <see cref="MongoConnectionException"/> for MongoDB,
/// SQLITE_IOERR for SQLite), so that the service meets it as it would meet the real thing.
/// </summary>
internal sealed class StoreFaultInjector(IOptions<StoreFaultOptions> options, IConfiguration configuration, TimeProvider time)
{
    private static readonly InjectedFault[] Faults =
        [InjectedFault.FailBefore, InjectedFault.TimeoutBefore, InjectedFault.CommitThenThrow, InjectedFault.CommitThenTimeout];

    private readonly StoreFaultOptions _options = options.Value;
    private readonly Random _random = options.Value.Seed == 0 ? new Random() : new Random(options.Value.Seed);
    private readonly bool _postgres = string.Equals(configuration["Store:Provider"], nameof(StoreProvider.PostgreSql), StringComparison.OrdinalIgnoreCase);
    private readonly bool _mongoDb = string.Equals(configuration["Store:Provider"], nameof(StoreProvider.MongoDb), StringComparison.OrdinalIgnoreCase);
    private readonly ConcurrentDictionary<string, long> _injected = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, long> _calls = new(StringComparer.Ordinal);

    /// <summary>What has been injected so far, by operation and way ("CommitAsync/CommitThenThrow"), and the calls seen.</summary>
    public StoreFaultCounts Counts() => new(
        _injected.Values.Sum(),
        _calls.Values.Sum(),
        new SortedDictionary<string, long>(_injected, StringComparer.Ordinal),
        new SortedDictionary<string, long>(_calls, StringComparer.Ordinal));

    /// <summary>Runs a store call that returns a value, failing it as chance has it.</summary>
    public async Task<T> RunAsync<T>(string operation, Func<Task<T>> call, CancellationToken cancellationToken)
    {
        var fault = Next(operation);
        if (fault is InjectedFault.FailBefore or InjectedFault.TimeoutBefore)
        {
            await FailAsync(operation, fault, cancellationToken).ConfigureAwait(false);
        }

        var result = await call().ConfigureAwait(false);
        if (fault is InjectedFault.CommitThenThrow or InjectedFault.CommitThenTimeout)
        {
            await FailAsync(operation, fault, cancellationToken).ConfigureAwait(false);
        }

        return result;
    }

    /// <summary>Runs a store call without a value, failing it as chance has it.</summary>
    public Task RunAsync(string operation, Func<Task> call, CancellationToken cancellationToken) =>
        RunAsync(operation, async () =>
        {
            await call().ConfigureAwait(false);
            return true;
        }, cancellationToken);

    private InjectedFault Next(string operation)
    {
        _calls.AddOrUpdate(operation, 1, static (_, n) => n + 1);
        var rate = _options.Operations.TryGetValue(operation.Replace("Async", "", StringComparison.Ordinal), out var own) ? own : _options.Rate;
        InjectedFault fault;
        lock (_random)
        {
            fault = _random.NextDouble() < rate ? Faults[_random.Next(Faults.Length)] : InjectedFault.None;
        }

        if (fault != InjectedFault.None)
        {
            _injected.AddOrUpdate($"{operation}/{fault}", 1, static (_, n) => n + 1);
        }

        return fault;
    }

    private async Task FailAsync(string operation, InjectedFault fault, CancellationToken cancellationToken)
    {
        var timesOut = fault is InjectedFault.TimeoutBefore or InjectedFault.CommitThenTimeout;
        if (timesOut)
        {
            await Task.Delay(_options.Delay, time, cancellationToken).ConfigureAwait(false);
        }

        var message = $"injected fault: {operation} {fault}";
        Exception cause = timesOut ? new TimeoutException(message) : new IOException(message);
        // Each store's own driver's failure, as its store classifies it (IStoreFailures): a broken connection.
        if (_mongoDb)
        {
            throw new MongoConnectionException(new ConnectionId(new ServerId(new ClusterId(), new DnsEndPoint("injected", 27017))),
                $"An exception occurred while receiving a message from the server ({message})", cause);
        }

        throw _postgres
            ? new NpgsqlException($"Exception while reading from stream ({message})", cause)
            : new SqliteException($"SQLite Error 10: 'disk I/O error' ({message}).", 10);
    }
}

/// <summary>The injector's counts, as GET /fault-injection answers them.</summary>
internal sealed record StoreFaultCounts(long Injected, long Calls, IReadOnlyDictionary<string, long> ByFault, IReadOnlyDictionary<string, long> CallsByOperation);
