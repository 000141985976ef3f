using Microsoft.Extensions.Options;

namespace WorkflowService.Storage.MongoDb;

/// <summary>Checks the MongoDB store's settings at start-up, with messages that name the configuration keys.</summary>
internal sealed class MongoStoreOptionsValidator(string section) : IValidateOptions<MongoStoreOptions>
{
    public ValidateOptionsResult Validate(string? name, MongoStoreOptions options)
    {
        var problems = options.Problems(section).ToList();
        return problems.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(problems);
    }
}
