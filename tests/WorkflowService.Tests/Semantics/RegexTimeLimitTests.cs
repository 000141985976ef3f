using WorkflowService.Engine.Persistence;
using WorkflowService.Tests.Backends;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Semantics;

/// <summary>
/// Issue #11, point 8: <c>Expressions:Timeout</c> bounds regular expressions too. A catastrophic-backtracking match runs
/// inside one call, where the statement-level time check never comes; it must fail like any expression that ran out of
/// time (the start returns, the run is retried, the instance faults with the reason) instead of running for Jint's own
/// 10 s default on every attempt.
/// </summary>
public abstract class RegexTimeLimitTests<TBackend> : ServiceTest<TBackend> where TBackend : StoreBackend, new()
{
    // Five attempts at the 1 s limit fault the instance well inside WaitForAsync's 30 s deadline; at Jint's 10 s regex
    // default they could not. No test here measures a duration.
    protected override Dictionary<string, string?> Settings => new()
    {
        ["Expressions:Timeout"] = "00:00:01",
        ["Engine:RetryBackoff"] = "00:00:00.010",
        ["Engine:MaxAttempts"] = "5",
    };

    [Theory]
    [InlineData("/(a+)+$/.test('a'.repeat(32) + 'b')")]
    [InlineData("new RegExp('(a+)+$').test('a'.repeat(32) + 'b')")]
    [InlineData("('a'.repeat(32) + 'b').match('(a+)+$')")]
    [InlineData("('a'.repeat(32) + 'b').replace(/(a+)+$/g, '')")]
    [InlineData("('a'.repeat(32) + 'b').split(/(a+)+$/)")]
    [InlineData("/(a+)+$/v.test('a'.repeat(32) + 'b')")]
    // Many matches, each shorter than the limit: together they must not outlast it either.
    [InlineData("(() => { let n = 0; for (let i = 0; i < 200; i++) { n += /(a+)+$/.test('a'.repeat(21) + 'b') ? 1 : 0; } return n; })()")]
    [InlineData("(() => { const re = /(a+)+$/; let n = 0; for (let i = 0; i < 200; i++) { n += re.test('a'.repeat(21) + 'b') ? 1 : 0; } return n; })()")]
    public async Task A_catastrophic_regex_fails_within_the_expression_time_limit_and_faults_the_instance(string expression)
    {
        var name = Definitions.Unique("regex");
        await Api.PublishAsync($$"""
            {
              "name": "{{name}}",
              "steps": [
                { "id": "match", "type": "assign", "set": { "x": {{System.Text.Json.JsonSerializer.Serialize(expression)}} } },
                { "id": "done", "type": "complete" }
              ]
            }
            """);

        var instance = await Api.StartAsync(name);
        Assert.Equal(InstanceStatus.Running, instance.Status);
        var faulted = await Api.WaitForAsync(instance.Id, InstanceStatus.Faulted);

        Assert.Contains("exceeded its time limit", faulted.Error, StringComparison.Ordinal);
        using var ready = await Api.Http.GetAsync("/health/ready");
        Assert.True(ready.IsSuccessStatusCode);
    }
}

public sealed class SqliteRegexTimeLimitTests : RegexTimeLimitTests<SqliteBackend>;

public sealed class PostgresRegexTimeLimitTests : RegexTimeLimitTests<PostgresBackend>;

public sealed class MongoDbRegexTimeLimitTests : RegexTimeLimitTests<MongoDbBackend>;
