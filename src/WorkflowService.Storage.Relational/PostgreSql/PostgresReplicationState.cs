using System.Globalization;

namespace WorkflowService.Storage.Relational.PostgreSql;

/// <summary>
/// The server's answers that decide whether an acknowledged commit survives a failover: whether it is a standby
/// itself, synchronous_commit and synchronous_standby_names as the store's sessions see them, and its standbys in
/// pg_stat_replication (<paramref name="Hidden"/>: those whose sync_state this role may not read).
/// </summary>
internal sealed record PostgresReplicationState(
    bool InRecovery, string SynchronousCommit, string SynchronousStandbyNames, int Standbys, int Synchronous, int Hidden)
{
    /// <summary>
    /// The setting that lets a commit be acknowledged before a standby has it, while standbys exist (so a failover can
    /// promote one that lacks it); null when every acknowledged commit is on a synchronous standby, or nothing can fail over.
    /// </summary>
    public string? SettingThatLosesWrites =>
        InRecovery || Standbys == 0 || Hidden > 0 ? null
        : SynchronousCommit is "off" or "local" ? "synchronous_commit"
        : Synchronous == 0 ? "synchronous_standby_names"
        : null;

    /// <summary>The line /health/ready shows.</summary>
    public string Describe()
    {
        if (InRecovery)
        {
            return "postgres: standby (in recovery), read-only";
        }

        if (Standbys == 0)
        {
            return string.IsNullOrWhiteSpace(SynchronousStandbyNames)
                ? "postgres: primary, no standby"
                : "postgres: primary, no standby connected: commits wait for one (synchronous_standby_names is set)";
        }

        if (Hidden > 0)
        {
            return $"postgres: primary, {Count(Standbys, "standby")}, sync state hidden from this role (grant it pg_monitor to show it)";
        }

        return SettingThatLosesWrites switch
        {
            "synchronous_commit" => $"postgres: primary, {Count(Standbys, "standby")}, asynchronous: acknowledged writes can be lost on failover (synchronous_commit is {SynchronousCommit})",
            "synchronous_standby_names" => $"postgres: primary, {Count(Standbys, "asynchronous standby")}: acknowledged writes can be lost on failover ({(string.IsNullOrWhiteSpace(SynchronousStandbyNames) ? "synchronous_standby_names is empty" : "no connected standby matches synchronous_standby_names")})",
            _ => $"postgres: primary, {Count(Synchronous, "synchronous standby")}" + (Standbys > Synchronous ? $", {Count(Standbys - Synchronous, "asynchronous standby")}" : ""),
        };
    }

    private static string Count(int n, string what) =>
        n.ToString(CultureInfo.InvariantCulture) + " " + what + (n == 1 ? "" : "s");
}
