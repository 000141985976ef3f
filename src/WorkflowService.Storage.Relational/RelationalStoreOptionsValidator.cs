using Microsoft.Extensions.Options;

namespace WorkflowService.Storage.Relational;

/// <summary>Checks a store's settings at start-up, with messages that name the configuration keys.</summary>
internal sealed class RelationalStoreOptionsValidator<TOptions>(string section, string store) : IValidateOptions<TOptions>
    where TOptions : RelationalStoreOptions
{
    public ValidateOptionsResult Validate(string? name, TOptions options)
    {
        var problems = options.Problems(section, store).ToList();
        return problems.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(problems);
    }
}
