using Microsoft.Extensions.Options;
using StackExchange.Redis;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Providers.WakeUp;

namespace WorkflowService.WakeUp.Redis;

/// <summary>
/// The wake-up bus over Redis pub/sub: one connection per node, subscribed to one channel, that also publishes.
/// Pub/sub rather than streams: a hint is worth something only while it is fresh, and the store (not Redis) keeps the
/// work, so nothing needs replaying, trimming or acknowledging; a node that was away looks at the store once when it
/// is back. Reconnecting is <see cref="BroadcastWakeUp"/>'s (bounded, jittered): the client's own is turned off by
/// closing the connection at its first failure.
/// </summary>
public sealed class RedisWakeUpBus(IOptions<RedisWakeUpOptions> options, NodeIdentity node) : IWakeUpBus
{
    private volatile ConnectionMultiplexer? _connection;

    public string Name => "Redis pub/sub";

    /// <summary>This node's connection's name in Redis (CLIENT LIST).</summary>
    public string ClientName => $"workflow-wakeup:{node.Id}";

    private RedisChannel Channel => RedisChannel.Literal(options.Value.Channel);

    public async Task ListenAsync(Action<string> received, Action<string> listening, CancellationToken stopping)
    {
        var settings = options.Value;
        var configuration = ConfigurationOptions.Parse(settings.ConnectionString!);
        configuration.AbortOnConnectFail = true;
        configuration.ConnectRetry = 1;
        configuration.ConnectTimeout = (int)settings.ConnectTimeout.TotalMilliseconds;
        // Named per node, so that an operator (or a test) can tell the nodes' connections apart in CLIENT LIST.
        configuration.ClientName = ClientName;
        var connection = await ConnectionMultiplexer.ConnectAsync(configuration).WaitAsync(stopping).ConfigureAwait(false);
        await using var closing = connection.ConfigureAwait(false);
        var broken = new TaskCompletionSource<Exception>(TaskCreationOptions.RunContinuationsAsynchronously);
        connection.ConnectionFailed += (_, e) =>
            broken.TrySetResult(e.Exception ?? new IOException($"the connection to {e.EndPoint} failed ({e.FailureType})"));
        await connection.GetSubscriber().SubscribeAsync(Channel, (_, message) =>
        {
            if (message.HasValue)
            {
                received(message!);
            }
        }).WaitAsync(stopping).ConfigureAwait(false);
        if (!connection.IsConnected)
        {
            // Failed before the handler above was attached: start again rather than wait for an event already gone.
            throw new IOException("the wake-up connection to Redis broke while subscribing");
        }

        _connection = connection;
        listening($"{string.Join(", ", connection.GetEndPoints().Select(e => e.ToString()))}, channel {settings.Channel}");
        try
        {
            var failure = await broken.Task.WaitAsync(stopping).ConfigureAwait(false);
            throw new IOException("the wake-up connection to Redis broke", failure);
        }
        finally
        {
            _connection = null;
        }
    }

    public async Task PublishAsync(string message, CancellationToken cancellationToken)
    {
        var connection = _connection ?? throw new IOException("not connected to Redis");
        await connection.GetSubscriber().PublishAsync(Channel, message).WaitAsync(cancellationToken).ConfigureAwait(false);
    }
}
