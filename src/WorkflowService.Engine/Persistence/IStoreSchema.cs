namespace WorkflowService.Engine.Persistence;

/// <summary>
/// The store's schema and its upgrades: what has to happen before any other call, and the operator's view of it. A
/// store's schema moves forward in numbered steps; each step keeps the previous release working (expand) unless it says
/// otherwise (contract), so that nodes of two releases can share one database during a rolling deploy.
/// </summary>
public interface IStoreSchema
{
    /// <summary>
    /// Brings the schema up to this build's (when the store is configured to migrate at start-up), then checks that this
    /// node's release is within the range the database supports; throws <see cref="StoreSchemaException"/> when it is not.
    /// Safe on many nodes at once.
    /// </summary>
    Task InitializeAsync(CancellationToken cancellationToken);

    /// <summary>The schema the database holds, the range of releases it supports, and the steps applied and pending. Changes nothing.</summary>
    Task<SchemaStatus> GetSchemaStatusAsync(CancellationToken cancellationToken);

    /// <summary>Applies the pending steps, each in a transaction where the database allows, under a lock no other node holds.</summary>
    Task<SchemaStatus> MigrateAsync(CancellationToken cancellationToken);
}

/// <summary>A store's schema as an operator sees it.</summary>
/// <param name="Store">The store ("sqlite", "postgresql").</param>
/// <param name="NodeSchema">The schema this build is written for.</param>
/// <param name="OldestSupported">The oldest release schema that may still run on the database; null when it has no schema yet.</param>
/// <param name="Newest">The newest step applied; null when the database has no schema yet.</param>
/// <param name="Applied">The steps applied, oldest first.</param>
/// <param name="Pending">The steps this build would apply, oldest first.</param>
public sealed record SchemaStatus(
    string Store,
    int NodeSchema,
    int? OldestSupported,
    int? Newest,
    IReadOnlyList<SchemaStep> Applied,
    IReadOnlyList<SchemaStep> Pending)
{
    /// <summary>
    /// Indexes the schema should have and the database does not (or cannot use yet): a search attribute slot's index whose
    /// build failed, is under way, or waits for <c>migrate</c>. Filters still work without them, only slower.
    /// </summary>
    public IReadOnlyList<string> MissingIndexes { get; init; } = [];

    /// <summary>Whether a node of this build may run on the database as it is (its schema within the supported range, nothing pending).</summary>
    public bool NodeSupported => OldestSupported is { } oldest && Newest is { } newest && NodeSchema >= oldest && NodeSchema <= newest;

    /// <summary>
    /// Why a node of this build may not start on the database as it is, with what to do about it; null when it may. Every
    /// store refuses the same cases in the same words.
    /// </summary>
    /// <param name="migratesAtStartup">Whether the node applied (or could apply) the pending steps itself (Store:ApplyMigrationsAtStartup).</param>
    /// <param name="versionRecord">Where the store keeps its schema version, as an operator would look for it (a row, a document).</param>
    public string? RefusalReason(bool migratesAtStartup, string versionRecord)
    {
        if (OldestSupported is not { } oldest || Newest is not { } newest)
        {
            return migratesAtStartup
                ? $"The {Store} database has no workflow {versionRecord} after its migration; run `WorkflowService schema` to see its steps."
                : $"The {Store} database has no workflow schema, and this node does not migrate at start-up "
                  + "(Store:ApplyMigrationsAtStartup is false). Run `WorkflowService migrate` with the same settings first.";
        }

        if (NodeSchema < oldest)
        {
            return $"This node's release (schema {NodeSchema}) is older than the releases the {Store} database supports "
                   + $"(schemas {oldest} to {newest}): deploy a release of schema {oldest} or newer.";
        }

        return NodeSchema > newest
            ? $"The {Store} database has workflow schema {newest}; this node's release needs {NodeSchema} "
              + $"({string.Join(", ", Pending.Select(p => p.Version))} pending), and does not migrate at start-up "
              + "(Store:ApplyMigrationsAtStartup is false). Run `WorkflowService migrate` with the same settings first."
            : null;
    }
}

/// <summary>One numbered schema step.</summary>
/// <param name="Version">Its number: the schema a database holds once it is applied.</param>
/// <param name="Description">What it changes.</param>
/// <param name="OldestCompatible">The oldest release schema that still works once it is applied (lower than <paramref name="Version"/> for an expand step).</param>
/// <param name="AppliedAt">When it was applied; null while pending.</param>
public sealed record SchemaStep(int Version, string Description, int OldestCompatible, DateTime? AppliedAt);

/// <summary>The database's schema does not fit this node (too old or too new for it, or an upgrade it may not apply itself).</summary>
public sealed class StoreSchemaException(string message, Exception? inner = null) : Exception(message, inner);
