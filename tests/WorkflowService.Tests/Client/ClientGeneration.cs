using System.Diagnostics;
using System.Reflection;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Client;

/// <summary>
/// Generates the C# client of the service with NSwag from the OpenAPI document the running pipeline serves (its step
/// types restated in the inheritance form NSwag reads, <see cref="NSwagInheritance"/>). The result
/// is committed as <c>Client/Generated/WorkflowServiceClient.g.cs</c> and compiled into the tests; a test keeps that file
/// equal to what this makes. NSwag runs as its command-line tool from the NSwag.MSBuild package (see the project file).
/// </summary>
public static class ClientGeneration
{
    public const string ClassName = "WorkflowServiceClient";
    public const string Namespace = "WorkflowService.Tests.Client.Generated";
    public const string UpdateVariable = "UPDATE_GENERATED_CLIENT";

    /// <summary>
    /// The generator settings: one client class whose methods are named after the operationIds, System.Text.Json DTOs,
    /// an injected HttpClient whose BaseAddress is the service, and ApiException&lt;ProblemDetails&gt; for declared errors.
    /// </summary>
    private static readonly string[] Settings =
    [
        $"/className:{ClassName}",
        $"/namespace:{Namespace}",
        "/operationGenerationMode:SingleClientFromOperationId",
        "/jsonLibrary:SystemTextJson",
        // System.Text.Json 9+ writes enum values by JsonStringEnumMemberName, which NSwag adds from this version on: values that
        // are not PascalCase C# names (the step types, "waitForSignal") then go over the wire as the document spells them.
        "/jsonLibraryVersion:10.0",
        "/generateDtoTypes:true",
        "/generateClientInterfaces:false",
        "/generateExceptionClasses:true",
        "/exceptionClass:ApiException",
        "/generateOptionalParameters:true",
        "/generateSyncMethods:false",
        "/injectHttpClient:true",
        "/disposeHttpClient:false",
        "/useBaseUrl:false",
        "/generateBaseUrlProperty:false",
        "/generateNullableReferenceTypes:true",
        "/generateOptionalPropertiesAsNullable:true",
        "/generateDataAnnotations:false",
    ];

    private static readonly TimeSpan GeneratorTimeout = TimeSpan.FromMinutes(2);

    /// <summary>The committed client, found beside the test project's source (located from the test assembly's folder).</summary>
    public static string CommittedFilePath => Path.Combine(ProjectDirectory(), "Client", "Generated", ClassName + ".g.cs");

    public static bool UpdateRequested => Environment.GetEnvironmentVariable(UpdateVariable) is "1" or "true";

    public static async Task<string> FetchDocumentAsync(WorkflowServiceFactory factory)
    {
        using var http = factory.CreateClient();
        using var response = await http.GetAsync("/openapi/v1.json");
        response.EnsureSuccessStatusCode();
        return await response.Content.ReadAsStringAsync();
    }

    /// <summary>Runs NSwag's openapi2csclient on the document and returns the generated C# file.</summary>
    public static async Task<string> GenerateAsync(string openApiJson)
    {
        var work = Directory.CreateTempSubdirectory("workflow-client-");
        try
        {
            var input = Path.Combine(work.FullName, "openapi.json");
            var output = Path.Combine(work.FullName, ClassName + ".g.cs");
            // NSwag reads the steps' oneOf only in its inheritance form (see NSwagInheritance).
            await File.WriteAllTextAsync(input, NSwagInheritance.Rewrite(openApiJson));

            var start = new ProcessStartInfo(DotnetHost())
            {
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
                WorkingDirectory = work.FullName,
            };
            foreach (var argument in (string[])[NSwagCommand(), "openapi2csclient", $"/input:{input}", $"/output:{output}", .. Settings])
            {
                start.ArgumentList.Add(argument);
            }

            using var process = Process.Start(start) ?? throw new InvalidOperationException($"could not start {start.FileName}");
            var stdout = process.StandardOutput.ReadToEndAsync();
            var stderr = process.StandardError.ReadToEndAsync();
            using (var timeout = new CancellationTokenSource(GeneratorTimeout))
            {
                try
                {
                    await process.WaitForExitAsync(timeout.Token);
                }
                catch (OperationCanceledException)
                {
                    process.Kill(entireProcessTree: true);
                    throw new TimeoutException($"NSwag did not finish within {GeneratorTimeout}.");
                }
            }

            if (process.ExitCode != 0 || !File.Exists(output))
            {
                throw new InvalidOperationException(
                    $"NSwag failed (exit code {process.ExitCode}):\n{await stdout}\n{await stderr}");
            }

            return Normalize(await File.ReadAllTextAsync(output));
        }
        finally
        {
            work.Delete(recursive: true);
        }
    }

    /// <summary>One line-ending convention and a final newline, so a checkout with other line endings still compares equal.</summary>
    public static string Normalize(string code) => code.ReplaceLineEndings("\n").TrimEnd() + "\n";

    /// <summary>dotnet-nswag.dll in the NSwag.MSBuild package, as the build recorded it in this assembly's metadata.</summary>
    private static string NSwagCommand()
    {
        var path = typeof(ClientGeneration).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
            .SingleOrDefault(a => a.Key == "NSwagCommand")?.Value;
        if (string.IsNullOrEmpty(path) || !File.Exists(path))
        {
            throw new InvalidOperationException(
                $"The NSwag command-line tool is not at '{path}'; restore the test project (it references NSwag.MSBuild).");
        }

        return Path.GetFullPath(path);
    }

    /// <summary>The dotnet host that runs this test process (the tests run as an apphost, so not the process itself).</summary>
    private static string DotnetHost()
    {
        if (Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } hostPath && File.Exists(hostPath))
        {
            return hostPath;
        }

        // The shared runtime lives in <dotnet root>/shared/Microsoft.NETCore.App/<version>/.
        var runtime = Path.GetDirectoryName(typeof(object).Assembly.Location)!;
        var host = Path.Combine(runtime, "..", "..", "..", OperatingSystem.IsWindows() ? "dotnet.exe" : "dotnet");
        return File.Exists(host) ? Path.GetFullPath(host) : "dotnet";
    }

    private static string ProjectDirectory()
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "WorkflowService.Tests.csproj")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException($"WorkflowService.Tests.csproj is not in {AppContext.BaseDirectory} or any folder above it.");
    }
}
