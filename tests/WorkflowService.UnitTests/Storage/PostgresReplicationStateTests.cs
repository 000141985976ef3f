using WorkflowService.Storage.Relational.PostgreSql;

namespace WorkflowService.UnitTests.Storage;

public sealed class PostgresReplicationStateTests
{
    private static PostgresReplicationState Primary(string synchronousCommit = "on", string names = "", int standbys = 0, int synchronous = 0, int hidden = 0) =>
        new(InRecovery: false, synchronousCommit, names, standbys, synchronous, hidden);

    [Fact]
    public void A_synchronous_standby_keeps_acknowledged_writes()
    {
        var state = Primary(names: "ANY 1 (pgautofailover_standby_2)", standbys: 1, synchronous: 1);
        Assert.Null(state.SettingThatLosesWrites);
        Assert.Equal("postgres: primary, 1 synchronous standby", state.Describe());
    }

    [Fact]
    public void Asynchronous_standbys_name_the_empty_synchronous_standby_names()
    {
        var state = Primary(standbys: 2);
        Assert.Equal("synchronous_standby_names", state.SettingThatLosesWrites);
        Assert.Equal("postgres: primary, 2 asynchronous standbys: acknowledged writes can be lost on failover (synchronous_standby_names is empty)", state.Describe());
    }

    [Fact]
    public void Standby_names_that_match_no_connected_standby_are_said_so()
    {
        var state = Primary(names: "FIRST 1 (elsewhere)", standbys: 1);
        Assert.Equal("synchronous_standby_names", state.SettingThatLosesWrites);
        Assert.Contains("no connected standby matches synchronous_standby_names", state.Describe(), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("off")]
    [InlineData("local")]
    public void Synchronous_commit_that_does_not_wait_for_the_standby_is_named_even_with_one(string synchronousCommit)
    {
        var state = Primary(synchronousCommit, names: "ANY 1 (s2)", standbys: 1, synchronous: 1);
        Assert.Equal("synchronous_commit", state.SettingThatLosesWrites);
        Assert.Equal($"postgres: primary, 1 standby, asynchronous: acknowledged writes can be lost on failover (synchronous_commit is {synchronousCommit})", state.Describe());
    }

    [Fact]
    public void A_single_server_has_nothing_to_fail_over_to()
    {
        Assert.Null(Primary().SettingThatLosesWrites);
        Assert.Equal("postgres: primary, no standby", Primary().Describe());
    }

    [Fact]
    public void A_synchronous_standby_named_but_absent_makes_commits_wait_not_lose()
    {
        var state = Primary(names: "ANY 1 (s2)");
        Assert.Null(state.SettingThatLosesWrites);
        Assert.Contains("commits wait", state.Describe(), StringComparison.Ordinal);
    }

    [Fact]
    public void A_role_that_cannot_read_sync_state_is_told_what_to_grant_and_not_warned()
    {
        var state = Primary(standbys: 1, hidden: 1);
        Assert.Null(state.SettingThatLosesWrites);
        Assert.Contains("pg_monitor", state.Describe(), StringComparison.Ordinal);
    }

    [Fact]
    public void Mixed_standbys_count_both_kinds() =>
        Assert.Equal("postgres: primary, 1 synchronous standby, 2 asynchronous standbys",
            Primary(names: "ANY 1 (a, b, c)", standbys: 3, synchronous: 1).Describe());
}
