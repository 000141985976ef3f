using System.Text;
using System.Text.Json;
using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.ChangeTracking;
using Microsoft.EntityFrameworkCore.Metadata;
using Microsoft.EntityFrameworkCore.Storage.ValueConversion;
using WorkflowService.Engine;
using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Schedules;
using WorkflowService.Engine.Search;
using WorkflowService.Engine.Search.Query;

namespace WorkflowService.Storage.Relational;

/// <summary>The one relational model shared by every SQL database; dialect differences live in <see cref="SqlDialect"/>.</summary>
public sealed class WorkflowDbContext(DbContextOptions<WorkflowDbContext> options) : DbContext(options)
{
    public DbSet<DefinitionRecord> Definitions => Set<DefinitionRecord>();
    public DbSet<WorkflowInstance> Instances => Set<WorkflowInstance>();
    public DbSet<SignalMessage> Signals => Set<SignalMessage>();
    public DbSet<HistoryEvent> History => Set<HistoryEvent>();
    public DbSet<HumanTask> Tasks => Set<HumanTask>();
    public DbSet<SchemaVersion> Schema => Set<SchemaVersion>();
    public DbSet<JobLease> Leases => Set<JobLease>();
    public DbSet<Subscription> Subscriptions => Set<Subscription>();
    public DbSet<EventDelivery> Deliveries => Set<EventDelivery>();

    internal DbSet<DeliveryQueueEntry> DeliveryQueue => Set<DeliveryQueueEntry>();
    public DbSet<Schedule> Schedules => Set<Schedule>();
    public DbSet<SearchAttributeRow> SearchAttributes => Set<SearchAttributeRow>();

    /// <summary>A list of strings as one JSON array column (the same text on every database), compared by its items.</summary>
    private static readonly ValueConverter<IReadOnlyList<string>, string> JsonList = new(
        v => JsonSerializer.Serialize(v, EngineJson.Options),
        v => JsonSerializer.Deserialize<List<string>>(v, EngineJson.Options) ?? new List<string>());

    private static readonly ValueComparer<IReadOnlyList<string>> ListComparer = new(
        (a, b) => a != null && b != null && a.SequenceEqual(b),
        v => v.Aggregate(0, (hash, item) => HashCode.Combine(hash, item.GetHashCode(StringComparison.Ordinal))),
        v => v.ToList());

    /// <summary>A schedule's recent actions as one JSON array column.</summary>
    private static readonly ValueConverter<IReadOnlyList<ScheduleAction>, string> ActionList = new(
        v => JsonSerializer.Serialize(v, EngineJson.Options),
        v => JsonSerializer.Deserialize<List<ScheduleAction>>(v, EngineJson.Options) ?? new List<ScheduleAction>());

    private static readonly ValueComparer<IReadOnlyList<ScheduleAction>> ActionComparer = new(
        (a, b) => a != null && b != null && a.SequenceEqual(b),
        v => v.Aggregate(0, (hash, item) => HashCode.Combine(hash, item.GetHashCode())),
        v => v.ToList());

    protected override void OnModelCreating(ModelBuilder modelBuilder)
    {
        modelBuilder.Entity<DefinitionRecord>(e =>
        {
            e.ToTable("wf_definitions");
            // Names and versions are per tenant.
            e.HasKey(d => new { d.Tenant, d.Name, d.Version });
            e.Property(d => d.Tenant).HasMaxLength(100).HasDefaultValue("");
            e.Property(d => d.Name).HasMaxLength(100);
        });

        modelBuilder.Entity<WorkflowInstance>(e =>
        {
            e.ToTable("wf_instances");
            e.HasKey(i => i.Id);
            e.Property(i => i.Id).ValueGeneratedNever();
            e.Property(i => i.DefinitionName).HasMaxLength(100);
            e.Property(i => i.Tenant).HasMaxLength(100).HasDefaultValue("");
            e.Property(i => i.Status).HasConversion<string>().HasMaxLength(16);
            e.Property(i => i.WaitKind).HasConversion<string>().HasMaxLength(16);
            e.Property(i => i.BusinessKey).HasMaxLength(200);
            e.Property(i => i.StartedBy).HasMaxLength(200);
            e.Property(i => i.IdempotencyKey).HasMaxLength(200);
            e.Property(i => i.WaitStepId).HasMaxLength(100);
            e.Property(i => i.WaitSignal).HasMaxLength(100);
            e.Property(i => i.WaitSignalId).HasColumnName("wait_timer_id");
            e.Property(i => i.Version).IsConcurrencyToken();
            // Keys are unique per tenant: two tenants may use the same idempotency or business key.
            e.HasIndex(i => new { i.Tenant, i.IdempotencyKey }).IsUnique().HasFilter("idempotency_key IS NOT NULL");
            // A business key names one open instance of a definition; ended instances' keys may repeat (schema 13), and the
            // newest with a key is read from the end of its entries (schema 15).
            e.HasIndex(i => new { i.Tenant, i.DefinitionName, i.BusinessKey, i.CreatedAt }).HasFilter("business_key IS NOT NULL");
            e.HasIndex(i => new { i.Tenant, i.DefinitionName, i.BusinessKey }, "OpenBusinessKey").HasDatabaseName("ix_wf_instances_open_business_key").IsUnique()
                .HasFilter("business_key IS NOT NULL AND completed_at IS NULL");
            e.HasIndex(i => new { i.Tenant, i.Status, i.CreatedAt });
            e.HasIndex(i => new { i.Tenant, i.DefinitionName, i.CreatedAt });
            // The retention job's: ended instances by when they ended (open ones have no entry).
            e.HasIndex(i => i.CompletedAt).HasFilter("completed_at IS NOT NULL");
            e.HasIndex(i => i.ParentInstanceId).HasFilter("parent_instance_id IS NOT NULL");
            // Search attributes (schema 16): written by the hand-written SQL only, typed slot columns. A slot's partial index
            // exists only while an attribute uses it (schema 17), so the store builds it, not the model (SlotIndexes).
            e.Ignore(i => i.SearchAttributes);
            e.Ignore(i => i.StoreSearchValues);
            foreach (var (type, slot) in SearchSlots.All)
            {
                Microsoft.EntityFrameworkCore.Metadata.Builders.PropertyBuilder property = type switch
                {
                    SearchValueType.Keyword or SearchValueType.Text => e.Property<string>(slot),
                    SearchValueType.Number => e.Property<double?>(slot),
                    SearchValueType.DateTime => e.Property<DateTime?>(slot),
                    _ => e.Property<bool?>(slot),
                };
                if (type is SearchValueType.Keyword or SearchValueType.Text)
                {
                    property.HasMaxLength(type == SearchValueType.Keyword ? SearchSlots.MaxKeywordLength : SearchSlots.MaxTextLength).IsRequired(false);
                }
            }
        });

        modelBuilder.Entity<SearchAttributeRow>(e =>
        {
            e.ToTable("wf_search_attributes");
            e.HasKey(a => new { a.Tenant, a.Name });
            e.Property(a => a.Tenant).HasMaxLength(100);
            e.Property(a => a.Name).HasMaxLength(64);
            e.Property(a => a.Type).HasMaxLength(16);
            e.Property(a => a.Slot).HasMaxLength(16);
            e.HasIndex(a => new { a.Tenant, a.Slot }).IsUnique();
        });

        modelBuilder.Entity<SignalMessage>(e =>
        {
            e.ToTable("wf_signals");
            e.HasKey(s => s.Id);
            e.Property(s => s.Id).ValueGeneratedNever();
            e.Property(s => s.Name).HasMaxLength(100);
            e.Property(s => s.Status).HasConversion<string>().HasMaxLength(16);
            e.Property(s => s.LeaseOwner).HasMaxLength(200);
            e.Property(s => s.IdempotencyKey).HasMaxLength(200);
            e.Property(s => s.Actor).HasMaxLength(200);
            e.Property(s => s.TraceParent).HasMaxLength(SignalMessage.TraceParentMaxLength);
            e.Property(s => s.LeaseToken).IsConcurrencyToken();
            e.Ignore(s => s.IsSystem);
            e.Ignore(s => s.TaskId);
            e.Ignore(s => s.ParentWaitId);
            e.Property(s => s.SubjectId).HasColumnName("task_id");
            // The claim query: pending signals in due order.
            e.HasIndex(s => new { s.Status, s.DueAtMs });
            e.HasIndex(s => new { s.InstanceId, s.Status });
            // An instance's ledger in its order, paged by position (schema 8).
            e.HasIndex(s => new { s.InstanceId, s.CreatedAt, s.Id });
            e.HasIndex(s => new { s.InstanceId, s.IdempotencyKey }).IsUnique().HasFilter("idempotency_key IS NOT NULL");
            e.HasIndex(s => s.LeaseOwner).HasFilter("lease_owner IS NOT NULL");
        });

        modelBuilder.Entity<HistoryEvent>(e =>
        {
            e.ToTable("wf_history");
            e.HasKey(h => h.Id);
            e.Property(h => h.Type).HasMaxLength(40);
            e.Property(h => h.StepId).HasMaxLength(100);
            e.Property(h => h.Actor).HasMaxLength(200);
            // The events of the commit after the row's own (schema 7): read and written by the store alone, never part of
            // the engine's HistoryEvent (see HistoryRows).
            e.Property<string?>(HistoryRows.MoreJsonProperty);
            e.HasIndex(h => new { h.InstanceId, h.Sequence }).IsUnique();
        });

        modelBuilder.Entity<SchemaVersion>(e =>
        {
            e.ToTable("wf_schema");
            e.HasKey(v => v.Id);
            e.Property(v => v.Id).ValueGeneratedNever();
            e.Property(v => v.NewestVersion).HasDefaultValue(5);
        });

        modelBuilder.Entity<JobLease>(e =>
        {
            e.ToTable("wf_leases");
            e.HasKey(l => l.Name);
            e.Property(l => l.Name).HasMaxLength(100);
            e.Property(l => l.Owner).HasMaxLength(200);
        });

        modelBuilder.Entity<HumanTask>(e =>
        {
            e.ToTable("wf_tasks");
            e.HasKey(t => t.Id);
            e.Property(t => t.Id).ValueGeneratedNever();
            e.Property(t => t.Status).HasConversion<string>().HasMaxLength(16);
            e.Property(t => t.DefinitionName).HasMaxLength(100);
            e.Property(t => t.Tenant).HasMaxLength(100).HasDefaultValue("");
            e.Property(t => t.StepId).HasMaxLength(100);
            e.Property(t => t.Title).HasMaxLength(400);
            e.Property(t => t.Assignee).HasMaxLength(200);
            e.Property(t => t.Role).HasMaxLength(200);
            e.Property(t => t.ClaimedBy).HasMaxLength(200);
            e.HasIndex(t => new { t.Tenant, t.Status, t.Assignee });
            e.HasIndex(t => new { t.Tenant, t.Status, t.Role });
            e.HasIndex(t => t.InstanceId);
        });

        modelBuilder.Entity<Subscription>(e =>
        {
            e.ToTable("wf_subscriptions");
            e.HasKey(s => s.Id);
            e.Property(s => s.Id).ValueGeneratedNever();
            e.Property(s => s.Tenant).HasMaxLength(100);
            e.Property(s => s.Name).HasMaxLength(SubscriptionSpec.MaxNameLength);
            e.Property(s => s.Endpoint).HasMaxLength(SubscriptionSpec.MaxEndpointLength);
            e.Property(s => s.Events).HasColumnName("events_json").HasConversion(JsonList, ListComparer);
            e.Property(s => s.Definitions).HasColumnName("definitions_json").HasConversion(JsonList, ListComparer);
            // MaxEventsPerBatch: schema 19 (its column's default, 1, covers rows written by older builds).
            e.Property(s => s.PausedReason).HasMaxLength(400);
            e.Property(s => s.Secret).HasMaxLength(200);
            e.Property(s => s.PreviousSecret).HasMaxLength(200);
            e.Property(s => s.Version).IsConcurrencyToken();
            e.HasIndex(s => new { s.Tenant, s.Name }).IsUnique();
        });

        modelBuilder.Entity<EventDelivery>(e =>
        {
            // The delivery log (schema 18): each delivery's event and how its attempts went. A waiting one's lease is in its
            // queue row (DeliveryQueueEntry), not here.
            e.ToTable("wf_deliveries");
            // The store's order: assigned at insert, after the instance row is locked, so within an instance it is commit order.
            e.HasKey(d => d.Sequence);
            e.Property(d => d.Sequence).ValueGeneratedOnAdd();
            e.Property(d => d.Tenant).HasMaxLength(100);
            e.Property(d => d.Type).HasMaxLength(EventTypes.MaxLength);
            e.Property(d => d.Status).HasConversion<string>().HasMaxLength(16);
            e.Property(d => d.LastError).HasMaxLength(1000);
            e.Ignore(d => d.LeaseOwner);
            e.Ignore(d => d.LeaseToken);
            e.Ignore(d => d.LeaseUntilMs);
            e.HasIndex(d => d.Id).IsUnique();
            // The delivery log: a subscription's deliveries, newest first.
            e.HasIndex(d => new { d.SubscriptionId, d.Sequence });
            // Retention (schema 11): an instance's deliveries go with it.
            e.HasIndex(d => d.InstanceId);
            // No index reads a column a settlement changes (status, attempts, delivered_at, …): the settlement's new version
            // of the row stays on its page and writes no index entry (schema 18).
        });

        modelBuilder.Entity<DeliveryQueueEntry>(e =>
        {
            // The outbox's waiting deliveries (schema 18): written with the log row, deleted when it is delivered or dead-lettered.
            e.ToTable("wf_delivery_queue");
            e.HasKey(q => q.Id);
            e.Property(q => q.Id).ValueGeneratedNever();
            e.Property(q => q.LeaseOwner).HasMaxLength(200);
            // The claim: waiting deliveries in due order; and the order check, an instance's waiting ones to a subscription.
            e.HasIndex(q => new { q.DueAtMs, q.Sequence });
            e.HasIndex(q => new { q.SubscriptionId, q.InstanceId, q.Sequence });
        });

        modelBuilder.Entity<Schedule>(e =>
        {
            e.ToTable("wf_schedules");
            e.HasKey(s => s.Id);
            e.Property(s => s.Id).ValueGeneratedNever();
            e.Property(s => s.Tenant).HasMaxLength(100);
            e.Property(s => s.Name).HasMaxLength(ScheduleSpec.MaxNameLength);
            e.Property(s => s.DefinitionName).HasMaxLength(100);
            e.Property(s => s.Cron).HasMaxLength(200);
            e.Property(s => s.TimeZone).HasMaxLength(100);
            e.Property(s => s.BusinessKeyTemplate).HasMaxLength(400);
            e.Property(s => s.Overlap).HasConversion<string>().HasMaxLength(16);
            e.Property(s => s.CatchUp).HasConversion<string>().HasMaxLength(16);
            e.Property(s => s.PausedReason).HasMaxLength(400);
            e.Property(s => s.Recent).HasColumnName("recent_json").HasConversion(ActionList, ActionComparer);
            e.Property(s => s.LeaseOwner).HasMaxLength(200);
            // A write checks both: a caller's change and a node's fire never overwrite one another, and a node whose lease
            // was taken over writes nothing.
            e.Property(s => s.Version).IsConcurrencyToken();
            e.Property(s => s.LeaseToken).IsConcurrencyToken();
            e.HasIndex(s => new { s.Tenant, s.Name }).IsUnique();
            // The claim (schema 14): due schedules in due order (paused and ended ones have no due time).
            e.HasIndex(s => s.DueAtMs);
        });

        // Every timestamp is UTC; SQLite keeps no kind, so say so on the way back.
        var utc = new Microsoft.EntityFrameworkCore.Storage.ValueConversion.ValueConverter<DateTime, DateTime>(
            v => v, v => DateTime.SpecifyKind(v, DateTimeKind.Utc));
        var utcNullable = new Microsoft.EntityFrameworkCore.Storage.ValueConversion.ValueConverter<DateTime?, DateTime?>(
            v => v, v => v == null ? v : DateTime.SpecifyKind(v.Value, DateTimeKind.Utc));
        foreach (var property in modelBuilder.Model.GetEntityTypes().SelectMany(t => t.GetProperties()))
        {
            if (property.ClrType == typeof(DateTime))
            {
                property.SetValueConverter(utc);
            }
            else if (property.ClrType == typeof(DateTime?))
            {
                property.SetValueConverter(utcNullable);
            }
        }

        // snake_case names everywhere, so that hand-written dialect SQL reads the same on every database.
        foreach (var entity in modelBuilder.Model.GetEntityTypes())
        {
            foreach (var property in entity.GetProperties())
            {
                // A property renamed in code keeps the column it had (HasColumnName) until a schema upgrade renames it.
                property.SetColumnName(property.FindAnnotation(RelationalAnnotationNames.ColumnName)?.Value as string ?? SnakeCase(property.Name));
            }

            // An index named in the model (a second one over the same columns) keeps its name.
            foreach (var index in entity.GetIndexes().Where(i => i.FindAnnotation(RelationalAnnotationNames.Name) is null))
            {
                index.SetDatabaseName($"ix_{entity.GetTableName()}_{string.Join("_", index.Properties.Select(p => SnakeCase(p.Name)))}");
            }

            foreach (var key in entity.GetKeys())
            {
                key.SetName($"pk_{entity.GetTableName()}");
            }
        }
    }

    internal static string SnakeCase(string name)
    {
        var builder = new StringBuilder(name.Length + 8);
        for (var i = 0; i < name.Length; i++)
        {
            var c = name[i];
            if (char.IsUpper(c))
            {
                if (i > 0)
                {
                    builder.Append('_');
                }

                builder.Append(char.ToLowerInvariant(c));
            }
            else
            {
                builder.Append(c);
            }
        }

        return builder.ToString();
    }
}
