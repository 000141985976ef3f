namespace WorkflowService.Engine.Persistence;

/// <summary>
/// Credentials refused before they expire (a console session that was signed out), kept in the store so that every node
/// refuses them. An entry lasts as long as the credential would have; then it is of no use and is deleted.
/// </summary>
public interface IRevocationList
{
    /// <summary>Refuses <paramref name="id"/> from now on, for <paramref name="remaining"/> (the credential's own remaining life).</summary>
    Task RevokeAsync(string id, TimeSpan remaining, CancellationToken cancellationToken);

    /// <summary>Whether <paramref name="id"/> was revoked and would not have expired yet.</summary>
    Task<bool> IsRevokedAsync(string id, CancellationToken cancellationToken);
}
