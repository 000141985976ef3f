using System.Net.Sockets;
using Microsoft.EntityFrameworkCore;
using Npgsql;
using WorkflowService.Storage.Relational.PostgreSql;

namespace WorkflowService.UnitTests.Storage;

public sealed class PostgresFailoverTests
{
    private static PostgresException Server(string sqlState) => new("server said no", "ERROR", "ERROR", sqlState);

    [Theory]
    [InlineData("25006")] // read_only_sql_transaction: a standby, or the demoted primary
    [InlineData("57P01")] // admin_shutdown
    [InlineData("57P02")] // crash_shutdown
    [InlineData("57P03")] // cannot_connect_now: a standby still starting, or being promoted
    [InlineData("08006")] // connection_failure
    public void A_server_gone_or_no_longer_primary_is_worth_another_attempt(string sqlState) =>
        Assert.True(PostgresFailover.MeansServerLost(Server(sqlState)));

    [Theory]
    [InlineData("23505")] // unique_violation: the request's own conflict
    [InlineData("40001")] // serialization_failure: retried, but the server is fine
    [InlineData("53300")] // too_many_connections: saturated, not gone
    [InlineData("42P01")] // undefined_table
    public void A_failure_of_the_statement_on_a_healthy_primary_is_not_a_lost_server(string sqlState) =>
        Assert.False(PostgresFailover.MeansServerLost(Server(sqlState)));

    [Fact]
    public void A_refused_connection_is_a_lost_server() =>
        Assert.True(PostgresFailover.MeansServerLost(
            new NpgsqlException("Failed to connect", new SocketException((int)SocketError.ConnectionRefused))));

    [Fact]
    public void No_suitable_host_among_several_is_a_lost_server() =>
        Assert.True(PostgresFailover.MeansServerLost(new NpgsqlException("No suitable host was found.")));

    [Fact]
    public void A_server_lost_inside_an_EF_Core_wrapper_is_found() =>
        Assert.True(PostgresFailover.MeansServerLost(new DbUpdateException("save failed", Server("25006"))));

    [Fact]
    public void A_pool_exhausted_waiting_is_not_a_lost_server() =>
        Assert.False(PostgresFailover.MeansServerLost(new NpgsqlException("pool exhausted", new TimeoutException())));

    [Fact]
    public void Only_a_write_refused_as_read_only_makes_the_node_forget_the_hosts_roles()
    {
        Assert.True(PostgresFailover.LandedOnAStandby(new DbUpdateException("save failed", Server("25006"))));
        Assert.False(PostgresFailover.LandedOnAStandby(Server("57P01")));
        Assert.False(PostgresFailover.LandedOnAStandby(new NpgsqlException("No suitable host was found.")));
    }

    [Theory]
    [InlineData("Host=a:5432,b:5433;Username=u", true)]
    [InlineData("Host=a:5432,b:5433;Username=u;Target Session Attributes=any", true)]
    [InlineData("Host=a:5432,b:5433;Username=u;Target Session Attributes=prefer-standby", true)]
    [InlineData("Host=a:5432,b:5433;Username=u;Target Session Attributes=primary", false)]
    [InlineData("Host=a:5432,b:5433;Username=u;Target Session Attributes=read-write", false)]
    [InlineData("Host=a;Username=u", false)]
    public void Several_hosts_need_the_primary_named_as_the_target(string connectionString, bool refused) =>
        Assert.Equal(refused, PostgreSqlStoreOptions.WritesMayLandOnStandby(connectionString));
}
