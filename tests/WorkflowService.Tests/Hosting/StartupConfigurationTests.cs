using System.Net;
using System.Net.Sockets;
using WorkflowService.Engine.Configuration;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Hosting;

/// <summary>
/// Every options section, run as the real process with one wrong value: the start ends with exit code 1 and one line on
/// standard error that names the key as an operator writes it, the value (none here is a secret) and what is expected,
/// never a stack trace or an exception's type name.
/// </summary>
public sealed class StartupConfigurationTests
{
    [Theory]
    [InlineData("Store:Provider", "Oracle", "Store:Provider 'Oracle' is not supported; allowed values: Sqlite, PostgreSql, MongoDb.")]
    [InlineData("Store:MaxPoolSize", "many", "Store:MaxPoolSize 'many' cannot be read; expected a whole number.")]
    [InlineData("WakeUp:Transport", "Kafka", "WakeUp:Transport 'Kafka' is not supported; allowed values: Auto, InProcess, PostgresNotify, MongoChangeStream, Redis.")]
    [InlineData("Workers:SignalWorkers", "abc", "Workers:SignalWorkers 'abc' cannot be read; expected a whole number between 1 and 256.")]
    [InlineData("Workers:LeaseDuration", "soon",
        "Workers:LeaseDuration 'soon' cannot be read; expected a duration as [d.]hh:mm:ss[.fff] (00:00:30 is 30 seconds) between 00:00:00.100 and 01:00:00.")]
    [InlineData("Engine:MaxAttempts", "x", "Engine:MaxAttempts 'x' cannot be read; expected a whole number between 1 and 100.")]
    [InlineData("Expressions:Timeout", "00:00:00", "Expressions:Timeout must be between 00:00:00.001 and 00:01:00 (it is 00:00:00).")]
    [InlineData("CallOuts:MaxResponseBytes", "lots", "CallOuts:MaxResponseBytes 'lots' cannot be read; expected a whole number between 1 and 16777216.")]
    [InlineData("CallOuts:AllowedNetworks:0", "10.0.0.1/8", "CallOuts:AllowedNetworks:0 '10.0.0.1/8' is not a network in CIDR notation; "
        + "expected an address and a prefix length with no bits set past it, such as 10.20.0.0/16 or fd00:1::/64.")]
    [InlineData("Api:MaxRequestBodyBytes", "10", "Api:MaxRequestBodyBytes must be between 1024 and 1073741824 (it is 10).")]
    [InlineData("Health:StoreTimeout", "00:00:00", "Health:StoreTimeout must be between 00:00:00.100 and 00:01:00 (it is 00:00:00).")]
    [InlineData("Authentication:Jwt:RequireHttpsMetadata", "perhaps", "Authentication:Jwt:RequireHttpsMetadata 'perhaps' cannot be read; expected true or false.")]
    [InlineData("Authorization:Roles:superuser:0", "root", "Authorization:Roles:superuser is not a service role; the roles are application, operator, designer, admin.")]
    [InlineData("RateLimiting:Period", "fast",
        "RateLimiting:Period 'fast' cannot be read; expected a duration as [d.]hh:mm:ss[.fff] (00:00:30 is 30 seconds) between 00:00:00.010 and 01:00:00.")]
    [InlineData("Http:CorsOrigins:0", "example.com", "Http:CorsOrigins must list origins such as https://app.example.com (scheme, host and port; no path, no trailing slash).")]
    [InlineData("Secrets:Directory", "run/secrets",
        "Secrets:Directory 'run/secrets' is not an absolute path; expected the directory the secret files are mounted in, such as /run/secrets.")]
    [InlineData("Serilog:MinimumLevel:Default", "Loud",
        "Serilog:MinimumLevel:Default 'Loud' is not a log level; allowed values: Verbose, Debug, Information, Warning, Error, Fatal.")]
    [InlineData("Serilog:WriteTo:0:Args:formatter", "No.Such.Formatter, Nowhere",
        "Serilog: the logging configuration cannot be applied: Type No.Such.Formatter, Nowhere was not found.")]
    [InlineData("Serilog:WriteTo:0:Name", "Nowhere", "Serilog: the logging configuration cannot be applied: Unable to find a method called Nowhere.")]
    [InlineData("Telemetry:InstanceCountInterval", "00:00:00", "Telemetry:InstanceCountInterval must be between 00:00:01 and 01:00:00 (it is 00:00:00).")]
    [InlineData("Telemetry:Prometheus:Enabled", "yes", "Telemetry:Prometheus:Enabled 'yes' cannot be read; expected true or false.")]
    [InlineData("Telemetry:Prometheus:Path", "metrics", "Telemetry:Prometheus:Path must be a path such as /metrics/prometheus: '/' and segments of letters, digits, '_', '.', '-'.")]
    [InlineData("Telemetry:Prometheus:Path", "/metrics", "Telemetry:Prometheus:Path '/metrics' is a route of the API; choose a path of its own, such as /metrics/prometheus.")]
    [InlineData("Console:SessionLifetime", "00:00:10", "Console:SessionLifetime must be between 00:01:00 and 7.00:00:00 (it is 00:00:10).")]
    [InlineData("Store:MigrationTimeout", "00:00:00", "Store:MigrationTimeout must be between 00:00:01 and 1.00:00:00 (it is 00:00:00).")]
    [InlineData("Store:ApplyMigrationsAtStartup", "maybe", "Store:ApplyMigrationsAtStartup 'maybe' cannot be read; expected true or false.")]
    [InlineData("Retention:EndedInstances", "00:00:10", "Retention:EndedInstances must be between 00:01:00 and 36500.00:00:00 (it is 00:00:10).")]
    [InlineData("Retention:Definitions:claims", "00:00:10", "Retention:Definitions:claims must be between 00:01:00 and 36500.00:00:00 (it is 00:00:10).")]
    [InlineData("Retention:BatchSize", "0", "Retention:BatchSize must be between 1 and 10000 (it is 0).")]
    [InlineData("Retention:Interval", "never",
        "Retention:Interval 'never' cannot be read; expected a duration as [d.]hh:mm:ss[.fff] (00:00:30 is 30 seconds) between 00:00:00.100 and 1.00:00:00.")]
    [InlineData("Console:PageSize", "1000", "Console:PageSize must be between 5 and 200 (it is 1000).")]
    [InlineData("Console:OpenIdConnect:ClientId", "workflow-console",
        "Console:OpenIdConnect:ClientId needs Authentication:Jwt:Authority: the console signs people in at the issuer the API trusts.")]
    [InlineData("Console:Enabled", "sometimes", "Console:Enabled 'sometimes' cannot be read; expected true or false.")]
    [InlineData("Console:SecureCookies", "false",
        "Console:SecureCookies=false lets the console's session travel over plain HTTP; it is allowed in the Development environment only, "
        + "and this is Production. Remove it: the cookies are Secure behind a proxy that ends TLS too.")]
    [InlineData("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", "OTEL_EXPORTER_OTLP_PROTOCOL 'http/json' is not supported; allowed values: grpc (the default), http/protobuf")]
    [InlineData("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4317",
        "OTEL_EXPORTER_OTLP_ENDPOINT 'collector:4317' is not an absolute http:// or https:// address (for example http://otel-collector:4317)")]
    [InlineData("OTEL_EXPORTER_OTLP_ENDPOINT", "user:s3cret@collector:4317",
        "OTEL_EXPORTER_OTLP_ENDPOINT (its value has credentials in it: not shown) is not an absolute http:// or https:// address (for example http://otel-collector:4317)")]
    [InlineData("ASPNETCORE_URLS", "localhost-9000",
        "ASPNETCORE_URLS (or --urls) 'localhost-9000' is not an address to listen on; expected scheme://host:port with a port from 0 to 65535, "
        + "several separated by ';', such as http://+:8080.")]
    [InlineData("ASPNETCORE_HTTP_PORTS", "http",
        "ASPNETCORE_HTTP_PORTS 'http' is not a port; expected a number from 0 to 65535, several separated by ';', such as 8080.")]
    public async Task A_wrong_value_in_any_section_ends_the_start_with_one_line_naming_its_key(string key, string value, string message)
    {
        // Outside development, with authentication explicitly off, so that only the value under test is wrong.
        var settings = new Dictionary<string, string?> { ["Authentication:Mode"] = "None", [key] = value };

        var (exitCode, output, error) = await TestServiceProcess.RunUntilExitAsync(settings);

        Assert.Equal(1, exitCode);
        Assert.Equal(message, error.TrimEnd());
        Assert.Empty(output.Trim());
        Assert.DoesNotContain("   at ", error + output, StringComparison.Ordinal);
        Assert.DoesNotContain("Exception", error + output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_secrets_directory_named_but_not_mounted_ends_the_start()
    {
        var settings = new Dictionary<string, string?> { ["Authentication:Mode"] = "None", ["Secrets:Directory"] = "/no/such/directory" };

        var (exitCode, _, error) = await TestServiceProcess.RunUntilExitAsync(settings);

        Assert.Equal(1, exitCode);
        Assert.Equal("Secrets:Directory '/no/such/directory' does not exist; mount the secret files there, or leave the setting out to read "
                     + "/run/secrets when it exists.", error.TrimEnd());
    }

    [Fact]
    public async Task A_port_another_process_holds_ends_the_start_with_one_line_on_standard_error()
    {
        using var holder = new TcpListener(IPAddress.Loopback, 0);
        holder.Start();
        var address = $"http://127.0.0.1:{((IPEndPoint)holder.LocalEndpoint).Port}";
        var database = Path.Combine(Directory.CreateTempSubdirectory("workflow-taken-").FullName, "workflow.db");

        var (exitCode, _, error) = await TestServiceProcess.RunUntilExitAsync(new Dictionary<string, string?>
        {
            ["Authentication:Mode"] = "None", ["ASPNETCORE_URLS"] = address, ["Store:ConnectionString"] = $"Data Source={database}",
        });

        // Standard output keeps the host's own error event (with its stack trace) for the log collector.
        Assert.Equal(1, exitCode);
        Assert.Equal($"Failed to bind to address {address}: address already in use. Stop the other process or listen elsewhere "
                     + "(ASPNETCORE_URLS, ASPNETCORE_HTTP_PORTS or --urls).", error.TrimEnd());
    }

    [Fact]
    public async Task A_database_out_of_reach_at_start_up_ends_the_start_with_one_line_on_standard_error_without_the_password()
    {
        // A port nobody listens on: the connection is refused at once.
        int port;
        using (var probe = new TcpListener(IPAddress.Loopback, 0))
        {
            probe.Start();
            port = ((IPEndPoint)probe.LocalEndpoint).Port;
        }

        var (exitCode, _, error) = await TestServiceProcess.RunUntilExitAsync(new Dictionary<string, string?>
        {
            ["Authentication:Mode"] = "None", ["Store:Provider"] = "PostgreSql",
            ["Store:ConnectionString"] = $"Host=127.0.0.1;Port={port};Username=workflow;Password=s3cret-value;Timeout=5",
        });

        Assert.Equal(1, exitCode);
        var line = Assert.Single(error.TrimEnd().Split('\n'));
        Assert.StartsWith("The PostgreSql store could not be reached or prepared at start-up: ", line, StringComparison.Ordinal);
        Assert.EndsWith("Check Store:ConnectionString, and that the database is up and lets this node in.", line, StringComparison.Ordinal);
        Assert.DoesNotContain("s3cret-value", error, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("Store:ConnectionString")]
    [InlineData("Authentication:ApiKeys:0:Hash")]
    [InlineData("Seq:ApiKey")]
    [InlineData("Authentication:ApiKeys:0:Roles:0")]
    public void A_value_that_may_be_a_secret_is_never_repeated_in_the_message(string key)
    {
        var message = new UnreadableSetting(key, "Password=hunter2", "a value of the right form").Message;

        Assert.Equal($"{key} cannot be read; expected a value of the right form.", message);
    }
}
