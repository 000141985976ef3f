using Microsoft.Data.Sqlite;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Npgsql;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Hosting;
using WorkflowService.Storage.MongoDb;
using WorkflowService.Storage.Relational.PostgreSql;
using WorkflowService.Storage.Relational.Sqlite;
using WorkflowService.Tests.Infrastructure;
using WorkflowService.WakeUp.Redis;

namespace WorkflowService.Tests.Hosting;

/// <summary>The store and the wake-up transport as configuration picks them, and the messages of wrong settings.</summary>
public sealed class BackendConfigurationTests
{
    private const string Postgres = "Host=127.0.0.1;Username=postgres;Password=postgres";
    private const string Mongo = "mongodb://mongo1:27017,mongo2:27017/?replicaSet=rs0";

    private static IConfiguration Configuration(Dictionary<string, string?> settings) =>
        new ConfigurationBuilder().AddInMemoryCollection(settings).Build();

    /// <summary>The message a start with these settings ends with, or null when they are right.</summary>
    private static string? StartupMessage(Dictionary<string, string?> settings) =>
        StartupCheck.Message(settings, (services, configuration) => services.AddWorkflowBackend(configuration));

    [Theory]
    [InlineData("Store:Provider", "Oracle", "Store:Provider 'Oracle' is not supported; allowed values: Sqlite, PostgreSql, MongoDb.")]
    [InlineData("Store:SqliteSynchronous", "OFF", "Store:SqliteSynchronous 'OFF' is not supported; allowed values: Normal, Full, Extra.")]
    [InlineData("Store:MaxPoolSize", "1", "Store:MaxPoolSize must be between 2 and 1000 (it is 1).")]
    [InlineData("Store:ConnectionString", "", "Store:ConnectionString is empty; set it for the Sqlite store.")]
    [InlineData("WakeUp:Transport", "Kafka", "WakeUp:Transport 'Kafka' is not supported; allowed values: Auto, InProcess, PostgresNotify, MongoChangeStream, Redis.")]
    [InlineData("WakeUp:Transport", "PostgresNotify", "WakeUp:Transport 'PostgresNotify' needs Store:Provider 'PostgreSql' (it is 'Sqlite').")]
    [InlineData("WakeUp:Transport", "MongoChangeStream", "WakeUp:Transport 'MongoChangeStream' needs Store:Provider 'MongoDb' (it is 'Sqlite').")]
    public void A_wrong_setting_fails_the_start_with_its_key_and_the_allowed_values(string key, string value, string message) =>
        Assert.Equal(message, StartupMessage(new() { [key] = value }));

    [Theory]
    [InlineData(null, "is empty")]
    [InlineData("redis:6379,pasword=s3cret-value", "cannot be read")]
    [InlineData(",", "names no server")]
    public void Redis_wake_ups_without_a_readable_connection_string_fail_the_start_without_repeating_it(string? connectionString, string reason)
    {
        var message = StartupMessage(new() { ["WakeUp:Transport"] = "Redis", ["WakeUp:Redis:ConnectionString"] = connectionString });

        Assert.NotNull(message);
        Assert.StartsWith("WakeUp:Redis:ConnectionString", message, StringComparison.Ordinal);
        Assert.Contains(reason, message, StringComparison.Ordinal);
        Assert.DoesNotContain("s3cret", message, StringComparison.Ordinal);
    }

    [Fact]
    public void Every_wrong_setting_of_the_postgresql_store_is_told_at_once()
    {
        var message = StartupMessage(new() { ["Store:Provider"] = "PostgreSql", ["Store:MaxPoolSize"] = "1001", ["Store:CommandTimeoutSeconds"] = "0" });

        Assert.Equal("Store:ConnectionString is empty; set it for the PostgreSql store. "
                     + "Store:CommandTimeoutSeconds must be between 1 and 3600 (it is 0). "
                     + "Store:MaxPoolSize must be between 2 and 1000 (it is 1001).", message);
    }

    [Fact]
    public void Every_wrong_setting_of_the_mongodb_store_is_told_at_once()
    {
        var message = StartupMessage(new()
        {
            ["Store:Provider"] = "MongoDb", ["Store:MaxPoolSize"] = "1", ["Store:Database"] = "work.flow", ["Store:TransactionRetries"] = "-1",
            ["Store:ChangeStreamMaxAwait"] = "00:01:00", ["Store:SocketTimeout"] = "00:00:30", ["Store:GroupCommitMaxBatch"] = "0",
        });

        Assert.NotNull(message);
        Assert.Contains("Store:ConnectionString is empty; set it for the MongoDb store", message, StringComparison.Ordinal);
        Assert.Contains("Store:Database must be 1 to 63 characters", message, StringComparison.Ordinal);
        Assert.Contains("Store:MaxPoolSize must be between 2 and 1000 (it is 1).", message, StringComparison.Ordinal);
        Assert.Contains("Store:ChangeStreamMaxAwait (00:01:00) must be shorter than Store:SocketTimeout (00:00:30)", message, StringComparison.Ordinal);
        Assert.Contains("Store:TransactionRetries must be between 0 and 20 (it is -1).", message, StringComparison.Ordinal);
        Assert.Contains("Store:GroupCommitMaxBatch must be between 1 and 1000 (it is 0).", message, StringComparison.Ordinal);
        Assert.Contains("Store:GroupCommitWriters (4) must be fewer than Store:MaxPoolSize (1)", message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("mongodb://workflow:s3cret-value@db/?replicaSet=rs0&connectTimeoutMS=fifty")]
    [InlineData("mongodb://workflow:s3cret-value@db/?replicaSet=rs0&noSuchOption=1&w=")]
    [InlineData("postgres://workflow:s3cret-value@db")]
    public void A_mongodb_connection_string_the_driver_cannot_read_fails_the_start_without_repeating_its_password(string connectionString)
    {
        var message = StartupMessage(new() { ["Store:Provider"] = "MongoDb", ["Store:ConnectionString"] = connectionString });

        Assert.NotNull(message);
        Assert.StartsWith("Store:ConnectionString cannot be read by the MongoDB driver: ", message, StringComparison.Ordinal);
        Assert.DoesNotContain("s3cret-value", message, StringComparison.Ordinal);
    }

    [Fact]
    public void The_mongodb_store_wakes_by_its_change_stream_by_default_and_takes_redis_wake_ups_instead_when_asked()
    {
        var services = new ServiceCollection().AddLogging().AddSingleton(TimeProvider.System);
        services.AddWorkflowBackend(Configuration(new() { ["Store:Provider"] = "mongodb", ["Store:ConnectionString"] = Mongo, ["WakeUp:Transport"] = "auto" }));
        Assert.Single(services, d => d.ServiceType == typeof(IWakeUpTransport));
        Assert.Contains(services, d => d.ServiceType == typeof(MongoChangeStreamWakeUp));
        Assert.Contains(services, d => d.ServiceType == typeof(MongoWorkflowStore));
        Assert.Null(StartupMessage(new() { ["Store:Provider"] = "MongoDb", ["Store:ConnectionString"] = Mongo }));

        var redis = new ServiceCollection().AddLogging().AddSingleton(TimeProvider.System);
        redis.AddWorkflowBackend(Configuration(new()
        {
            ["Store:Provider"] = "MongoDb", ["Store:ConnectionString"] = Mongo, ["WakeUp:Transport"] = "Redis", ["WakeUp:Redis:ConnectionString"] = "redis:6379",
        }));
        Assert.Contains(redis, d => d.ServiceType == typeof(RedisWakeUpBus));
        Assert.DoesNotContain(redis, d => d.ServiceType == typeof(MongoChangeStreamWakeUp));
    }

    [Fact]
    public void The_mongodb_client_takes_the_stores_bounded_waits_and_pool()
    {
        var settings = MongoDbServiceCollectionExtensions.ClientSettings(new MongoStoreOptions
        {
            ConnectionString = Mongo, MaxPoolSize = 7, ServerSelectionTimeout = TimeSpan.FromSeconds(3), SocketTimeout = TimeSpan.FromSeconds(20),
        });

        Assert.Equal(7, settings.MaxConnectionPoolSize);
        Assert.Equal(TimeSpan.FromSeconds(3), settings.ServerSelectionTimeout);
        Assert.Equal(TimeSpan.FromSeconds(20), settings.SocketTimeout);
        Assert.Equal("rs0", settings.ReplicaSetName);
        Assert.True(settings.RetryWrites);
    }

    [Theory]
    [InlineData("PostgreSql", "Host=db;Pasword=s3cret-value", "pasword")]
    [InlineData("PostgreSql", "Host=db;Port=fifty;Password=s3cret-value", "Port")]
    [InlineData("PostgreSql", "Host=db;Password=s3cret-value;Timeout=s3cret-value", null)]
    [InlineData("Sqlite", "Data Sorce=workflow.db", "'data sorce' is not supported")]
    [InlineData("Sqlite", "Data Source=workflow.db;Mode=Sometimes", null)]
    public void A_connection_string_the_driver_cannot_read_fails_the_start_without_repeating_a_password(string provider, string connectionString, string? reason)
    {
        var message = StartupMessage(new() { ["Store:Provider"] = provider, ["Store:ConnectionString"] = connectionString });

        Assert.NotNull(message);
        Assert.StartsWith($"Store:ConnectionString cannot be read by the {provider} driver: ", message, StringComparison.Ordinal);
        if (reason is not null)
        {
            Assert.True(message.Contains(reason, StringComparison.OrdinalIgnoreCase), message);
        }

        Assert.DoesNotContain("s3cret-value", message, StringComparison.Ordinal);
        Assert.DoesNotContain(Environment.NewLine, message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Choices_are_read_in_any_case_and_the_postgresql_store_brings_its_tuned_pools_and_its_wake_ups()
    {
        var services = new ServiceCollection().AddLogging().AddSingleton(TimeProvider.System);
        services.AddWorkflowBackend(Configuration(new()
        {
            ["Store:Provider"] = "postgresql", ["Store:ConnectionString"] = Postgres, ["Store:MaxPoolSize"] = "7", ["WakeUp:Transport"] = "auto",
        }));
        await using var provider = services.BuildServiceProvider();

        provider.GetRequiredService<IStartupValidator>().Validate();
        var pool = new NpgsqlConnectionStringBuilder(provider.GetRequiredService<NpgsqlDataSource>().ConnectionString);
        Assert.Equal(7, pool.MaxPoolSize);
        Assert.True(pool.NoResetOnClose);
        Assert.Equal(32, pool.MaxAutoPrepare);
        var claims = new NpgsqlConnectionStringBuilder(provider.GetRequiredService<PostgresClaimDataSource>().Source.ConnectionString);
        Assert.Equal(4, claims.MaxPoolSize);
        Assert.Contains("synchronous_commit=off", claims.Options, StringComparison.Ordinal);
        // Its statements are index seeks; a queue table small in its statistics must not be scanned for them.
        Assert.Contains("enable_seqscan=off -c enable_bitmapscan=off", claims.Options, StringComparison.Ordinal);
        // A session left idle inside a transaction (its node cut off mid-commit) ends after a lease (default 30 s).
        Assert.Contains("idle_in_transaction_session_timeout=30000", pool.Options, StringComparison.Ordinal);
        Assert.Contains("idle_in_transaction_session_timeout=30000", claims.Options, StringComparison.Ordinal);
        Assert.Single(services, d => d.ServiceType == typeof(IWakeUpTransport));
        Assert.Contains(services, d => d.ServiceType == typeof(PostgresNotifyBus));
    }

    [Fact]
    public void The_sqlite_store_takes_its_synchronous_mode_by_name_in_any_case_and_wakes_in_process()
    {
        var services = new ServiceCollection().AddLogging().AddSingleton(TimeProvider.System);
        services.AddWorkflowBackend(Configuration(new() { ["Store:SqliteSynchronous"] = "full", ["WakeUp:Transport"] = "InProcess" }));
        using var provider = services.BuildServiceProvider();

        Assert.Equal(SqliteSynchronous.Full, provider.GetRequiredService<IOptions<SqliteStoreOptions>>().Value.Synchronous);
        Assert.Equal(typeof(InProcessWakeUp), Assert.Single(services, d => d.ServiceType == typeof(IWakeUpTransport)).ImplementationType);
    }

    [Fact]
    public async Task The_sqlite_store_is_durable_by_default_and_names_the_cause_of_an_unavailable_file_in_words_an_operator_can_act_on()
    {
        var services = new ServiceCollection().AddLogging().AddSingleton(TimeProvider.System);
        services.AddWorkflowBackend(Configuration([]));
        await using var provider = services.BuildServiceProvider();

        // Every acknowledged commit is on the disk (found by the fault table's read-only-file row).
        Assert.Equal(SqliteSynchronous.Full, provider.GetRequiredService<IOptions<SqliteStoreOptions>>().Value.Synchronous);

        var failures = provider.GetRequiredService<IStoreFailures>();
        foreach (var (code, says) in new[] { (8, "read-only"), (10, "filesystem read-only, full or failing"), (13, "disk is full"), (14, "cannot be opened"), (5, "locked") })
        {
            // As EF Core hands it over: the driver's exception inside its own.
            var failure = new InvalidOperationException("An error occurred while saving the entity changes.", new SqliteException($"SQLite Error {code}.", code));
            Assert.True(failures.IsUnavailable(failure));
            Assert.Contains(says, failures.DescribeUnavailable(failure), StringComparison.Ordinal);
            Assert.Contains($"SQLite Error {code}", failures.DescribeUnavailable(failure), StringComparison.Ordinal);
        }

        Assert.False(failures.IsUnavailable(new SqliteException("SQLite Error 19: 'UNIQUE constraint failed'.", 19)));
    }

    [Fact]
    public void Registration_methods_check_their_arguments_at_once()
    {
        var section = Configuration([]).GetSection("Store");
        Assert.Throws<ArgumentNullException>(() => ((IServiceCollection)null!).AddSqliteWorkflowStore(section));
        Assert.Throws<ArgumentNullException>(() => new ServiceCollection().AddSqliteWorkflowStore(null!));
        Assert.Throws<ArgumentNullException>(() => ((IServiceCollection)null!).AddPostgreSqlWorkflowStore(section));
        Assert.Throws<ArgumentNullException>(() => new ServiceCollection().AddPostgreSqlWorkflowStore(null!));
        Assert.Throws<ArgumentNullException>(() => ((IServiceCollection)null!).AddPostgresNotifyWakeUp());
        Assert.Throws<ArgumentNullException>(() => new ServiceCollection().AddWorkflowBackend(null!));
    }

    [Theory]
    [InlineData("Sqlite")]
    [InlineData("PostgreSql")]
    public async Task Every_facet_of_the_store_is_the_one_store(string provider)
    {
        var services = new ServiceCollection().AddLogging().AddSingleton(TimeProvider.System);
        services.AddWorkflowBackend(Configuration(new() { ["Store:Provider"] = provider, ["Store:ConnectionString"] = provider == "Sqlite" ? "Data Source=:memory:" : Postgres }));
        await using var container = services.BuildServiceProvider();

        var store = container.GetRequiredService<IStoreSchema>();
        Assert.Same(store, container.GetRequiredService<IStoreClock>());
        Assert.Same(store, container.GetRequiredService<IDefinitionStore>());
        Assert.Same(store, container.GetRequiredService<IInstanceStore>());
        Assert.Same(store, container.GetRequiredService<ISignalQueue>());
        Assert.Same(store, container.GetRequiredService<ITaskStore>());
        Assert.Same(store, container.GetRequiredService<IOperatorQueries>());
    }
}
