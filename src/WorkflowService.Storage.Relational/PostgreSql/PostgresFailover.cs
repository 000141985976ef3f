using System.Net.Sockets;
using Npgsql;

namespace WorkflowService.Storage.Relational.PostgreSql;

/// <summary>
/// Follows the primary across a failover. Npgsql already marks a host that broke its connections (refused, reset, shut
/// down) as offline and empties its pool; what it cannot tell is a host it still believes primary that now answers as a
/// standby (a demoted primary that kept its sessions, a role cached for Host Recheck Seconds). That answer empties the
/// pool and makes Npgsql forget each host's role, so that the next attempt selects the primary again from the connection
/// string's list (Target Session Attributes).
/// </summary>
internal static class PostgresFailover
{
    /// <summary>Whether <paramref name="exception"/> (or one inside it) is a write refused by a server that is now a standby (25006).</summary>
    public static bool LandedOnAStandby(Exception exception)
    {
        for (var e = exception; e is not null; e = e.InnerException)
        {
            if (e is PostgresException { SqlState: PostgresErrorCodes.ReadOnlySqlTransaction })
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// Whether <paramref name="exception"/> (or one inside it) means the server the connection went to cannot serve the
    /// store's writes now: by SQLSTATE a read-only transaction (a standby, or a primary being demoted), a shutdown or a
    /// server not yet accepting connections, or a broken connection (class 08); by type a socket or stream that failed
    /// (connection refused or reset); or Npgsql's own "no suitable host" (an <see cref="NpgsqlException"/> that carries no
    /// SQLSTATE and no cause, or only the hosts' failures), which a multi-host string meets while no host is the primary yet.
    /// </summary>
    public static bool MeansServerLost(Exception exception)
    {
        for (var e = exception; e is not null; e = e.InnerException)
        {
            switch (e)
            {
                case PostgresException postgres when ServerLostStates(postgres.SqlState):
                case NpgsqlException { InnerException: SocketException or IOException }:
                case NpgsqlException { InnerException: null or AggregateException } when e.GetType() == typeof(NpgsqlException):
                    return true;
            }
        }

        return false;
    }

    /// <summary>The SQLSTATEs that say the server went away or cannot take writes (PostgreSQL's appendix A).</summary>
    internal static bool ServerLostStates(string sqlState) => sqlState switch
    {
        PostgresErrorCodes.ReadOnlySqlTransaction => true, // 25006: a standby, or the old primary after its demotion
        PostgresErrorCodes.AdminShutdown or PostgresErrorCodes.CrashShutdown or PostgresErrorCodes.CannotConnectNow => true, // 57P01-03
        _ => sqlState.StartsWith("08", StringComparison.Ordinal), // connection exceptions
    };

    /// <summary>
    /// Empties <paramref name="source"/>'s pool (idle connections now, busy ones when returned) and, for several hosts, the
    /// states Npgsql remembers for Host Recheck Seconds, so that the next open probes the hosts again.
    /// </summary>
    public static void Forget(NpgsqlDataSource source)
    {
        ArgumentNullException.ThrowIfNull(source);
        if (source is NpgsqlMultiHostDataSource hosts)
        {
            hosts.ClearDatabaseStates();
        }

        source.Clear();
    }
}
