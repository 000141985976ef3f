using System.Collections.Concurrent;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Definitions;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// Publishes definitions and hands out compiled ones, compiling each stored version once per node. Definitions are per
/// tenant ("" is the default tenant): every lookup and the cache are keyed by tenant, name and version.
/// </summary>
public sealed class DefinitionRegistry(
    IDefinitionStore store, ISearchAttributeStore search, IStoreClock clock, DefinitionCompiler compiler, TimeProvider time,
    IOptions<EngineOptions> options)
{
    private readonly ConcurrentDictionary<(string Tenant, string Name, int Version), CompiledDefinition> _compiled = new();
    private readonly ConcurrentDictionary<(string Tenant, string Name), (int Version, long ExpiresAt)> _latest = new();

    /// <summary>Validates and stores a new version; nothing is written when the definition has problems.</summary>
    public async Task<PublishResult> PublishAsync(string tenant, DefinitionDocument document, CancellationToken cancellationToken)
    {
        var diagnostics = new List<Diagnostic>();
        var probe = compiler.Compile(document, 0, diagnostics);
        if (probe is null)
        {
            return new PublishResult(null, null, diagnostics);
        }

        // An attribute has one type across the tenant's definitions, so that a filter over them is typed: declared (each
        // given its slot) before the version is stored, which then never meets a name it cannot write.
        if (probe.SearchAttributes.Count > 0
            && await search.DeclareSearchAttributesAsync(tenant, probe.SearchAttributes.Select(a => (a.Name, a.Type)).ToList(), cancellationToken)
                .ConfigureAwait(false) is { } problem)
        {
            diagnostics.Add(new Diagnostic($"$.searchAttributes.{problem.Name}.type", problem.Message));
            return new PublishResult(null, null, diagnostics);
        }

        var now = clock.Now().UtcDateTime;
        var record = await store.PublishDefinitionAsync(tenant, probe.Name, version => new DefinitionRecord
        {
            Tenant = tenant,
            Name = probe.Name,
            Version = version,
            Json = probe.Json,
            Description = probe.Description,
            CreatedAt = now,
        }, cancellationToken).ConfigureAwait(false);

        var compiled = probe.WithVersion(record.Version);
        _compiled[(tenant, compiled.Name, compiled.Version)] = compiled;
        _latest[(tenant, compiled.Name)] = (compiled.Version, time.GetTimestamp() + CacheTicks());
        return new PublishResult(compiled, record, diagnostics);
    }

    /// <summary>
    /// The given version of <paramref name="tenant"/>'s definition, or the latest when <paramref name="version"/> is null;
    /// null when there is none (another tenant's definition of the same name is never found).
    /// </summary>
    public async Task<CompiledDefinition?> GetAsync(string tenant, string name, int? version, CancellationToken cancellationToken)
    {
        if (version is null && _latest.TryGetValue((tenant, name), out var latest) && latest.ExpiresAt > time.GetTimestamp())
        {
            version = latest.Version;
        }

        if (version is { } v && _compiled.TryGetValue((tenant, name, v), out var cached))
        {
            return cached;
        }

        var record = await store.GetDefinitionAsync(tenant, name, version, cancellationToken).ConfigureAwait(false);
        if (record is null)
        {
            return null;
        }

        var compiled = Compile(record);
        if (version is null)
        {
            _latest[(tenant, name)] = (record.Version, time.GetTimestamp() + CacheTicks());
        }

        return compiled;
    }

    public CompiledDefinition Compile(DefinitionRecord record)
    {
        if (_compiled.TryGetValue((record.Tenant, record.Name, record.Version), out var cached))
        {
            return cached;
        }

        var diagnostics = new List<Diagnostic>();
        var document = DefinitionCompiler.Parse(record.Json, diagnostics);
        var compiled = document is null ? null : compiler.Compile(document, record.Version, diagnostics);
        if (compiled is null)
        {
            throw new InvalidOperationException(
                $"stored definition {record.Name} v{record.Version} no longer compiles: {string.Join("; ", diagnostics.Select(d => $"{d.Path}: {d.Message}"))}");
        }

        return _compiled.GetOrAdd((record.Tenant, record.Name, record.Version), compiled);
    }

    private long CacheTicks() => (long)(options.Value.LatestDefinitionCacheTime.TotalSeconds * time.TimestampFrequency);
}
