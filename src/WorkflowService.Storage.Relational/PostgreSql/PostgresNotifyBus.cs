using Npgsql;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Providers.WakeUp;

namespace WorkflowService.Storage.Relational.PostgreSql;

/// <summary>
/// The wake-up bus over LISTEN/NOTIFY on the store's own database: one listening connection per node, and NOTIFY
/// through the store's pool. Coalescing, echo, reconnecting and health are <see cref="BroadcastWakeUp"/>'s.
/// </summary>
public sealed class PostgresNotifyBus(NpgsqlDataSource dataSource) : IWakeUpBus
{
    public const string ChannelName = "workflow_wakeup";
    private static readonly TimeSpan IdleCheck = TimeSpan.FromSeconds(30);

    public string Name => "PostgreSQL LISTEN/NOTIFY";

    /// <summary>The process id of the listening connection, for operators (and the lost-wake-up test).</summary>
    public int? ListenerProcessId { get; private set; }

    public async Task ListenAsync(Action<string> received, Action<string> listening, CancellationToken stopping)
    {
        try
        {
            await ListenOnPrimaryAsync(received, listening, stopping).ConfigureAwait(false);
        }
        catch (Exception e) when (PostgresFailover.LandedOnAStandby(e))
        {
            // Listening on a server that is a standby now: the next pass (ReconnectingListener's, with its backoff)
            // selects the primary again. A server that went away Npgsql marks offline itself.
            PostgresFailover.Forget(dataSource);
            throw;
        }
    }

    private async Task ListenOnPrimaryAsync(Action<string> received, Action<string> listening, CancellationToken stopping)
    {
        await using var connection = await dataSource.OpenConnectionAsync(stopping).ConfigureAwait(false);
        connection.Notification += (_, e) => received(e.Payload);
        await using (var listen = new NpgsqlCommand($"LISTEN {ChannelName}", connection))
        {
            await listen.ExecuteNonQueryAsync(stopping).ConfigureAwait(false);
        }

        ListenerProcessId = connection.ProcessID;
        listening($"connection {connection.ProcessID}");
        try
        {
            while (!stopping.IsCancellationRequested)
            {
                if (!await connection.WaitAsync(IdleCheck, stopping).ConfigureAwait(false))
                {
                    // Quiet for a while: prove the connection is still alive.
                    await using var ping = new NpgsqlCommand("SELECT 1", connection);
                    await ping.ExecuteScalarAsync(stopping).ConfigureAwait(false);
                }
            }
        }
        finally
        {
            ListenerProcessId = null;
        }
    }

    public async Task PublishAsync(string message, CancellationToken cancellationToken)
    {
        await using var command = dataSource.CreateCommand("SELECT pg_notify(@channel, @payload)");
        command.Parameters.AddWithValue("channel", ChannelName);
        command.Parameters.AddWithValue("payload", message);
        await command.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
    }
}
