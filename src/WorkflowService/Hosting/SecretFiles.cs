using WorkflowService.Engine.Configuration;

namespace WorkflowService.Hosting;

/// <summary>
/// Settings from mounted secret files (Docker and Kubernetes secrets): one file per setting, named like
/// Store__ConnectionString, in the directory Secrets:Directory (default /run/secrets, read when it exists).
/// </summary>
internal static class SecretFiles
{
    public const string DirectoryKey = "Secrets:Directory";

    /// <summary>Adds the files as the last configuration source, so that a file overrides the same setting from anywhere else.</summary>
    public static IConfigurationBuilder AddSecretFiles(this IConfigurationManager configuration, string defaultDirectory)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        var directory = configuration[DirectoryKey];
        if (directory is not null && !Path.IsPathFullyQualified(directory))
        {
            throw ConfigurationChoice.Invalid(DirectoryKey,
                $"{DirectoryKey} '{directory}' is not an absolute path; expected the directory the secret files are mounted in, such as {defaultDirectory}.");
        }

        if (directory is not null && !Directory.Exists(directory))
        {
            throw ConfigurationChoice.Invalid(DirectoryKey,
                $"{DirectoryKey} '{directory}' does not exist; mount the secret files there, or leave the setting out to read {defaultDirectory} when it exists.");
        }

        return configuration.AddKeyPerFile(directory ?? defaultDirectory, optional: true, reloadOnChange: false);
    }
}
