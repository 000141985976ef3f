using Microsoft.Extensions.Options;
using StackExchange.Redis;

namespace WorkflowService.WakeUp.Redis;

/// <summary>The connection string must be one StackExchange.Redis can read; the message never repeats it (it may hold a password).</summary>
internal sealed class RedisWakeUpOptionsValidator(string path) : IValidateOptions<RedisWakeUpOptions>
{
    public ValidateOptionsResult Validate(string? name, RedisWakeUpOptions options)
    {
        if (string.IsNullOrWhiteSpace(options.ConnectionString))
        {
            return ValidateOptionsResult.Fail($"{path}:ConnectionString is empty; set it for WakeUp:Transport 'Redis' (for example \"redis:6379\").");
        }

        try
        {
            var configuration = ConfigurationOptions.Parse(options.ConnectionString);
            return configuration.EndPoints.Count > 0
                ? ValidateOptionsResult.Success
                : ValidateOptionsResult.Fail($"{path}:ConnectionString names no server; expected host:port[,option=value...], for example \"redis:6379\".");
        }
        catch (ArgumentException)
        {
            return ValidateOptionsResult.Fail($"{path}:ConnectionString cannot be read as a Redis configuration; expected host:port[,option=value...], for example \"redis:6379,password=...\".");
        }
    }
}
