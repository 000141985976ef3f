using System.Globalization;
using System.Reflection.PortableExecutable;
using System.Xml.Linq;
using WorkflowService.Tests.Infrastructure;
using WorkflowService.Testing;

namespace WorkflowService.Tests.Hosting;

/// <summary>
/// The container image every compose file and Kubernetes overlay starts from, proved without a Docker engine: the
/// Dockerfile's build stage replayed on a clean copy of the tracked files (the context .dockerignore lets through),
/// then the published service started with the runtime stage's environment until <c>/health/ready</c> answers.
/// Where a Docker engine answers, <see cref="The_image_builds_and_serves_with_a_Docker_engine"/> runs the real build.
/// </summary>
/// <remarks>
/// Issue 34: the image did not build (no .editorconfig in the stage, the MongoDB project missing from the restore
/// layer, docs/ files the host embeds not copied), and nothing noticed, because no test ever built it.
/// </remarks>
public sealed class ContainerImageTests
{
    private static readonly Lazy<Task<ImageReplay>> Replay = new(ReplayAsync);

    [Fact]
    public void The_dockerignore_matcher_matches_the_way_Docker_does()
    {
        var context = new DockerBuildContext(["# comment", "**/bin/", ".git", "**/*.db", "docs/", "!docs/keep.md", "/rooted.txt"]);

        Assert.True(context.Excludes("src/WorkflowService/bin/Release/x.dll"));
        Assert.True(context.Excludes("bin/x.dll"));
        Assert.True(context.Excludes(".git/config"));
        Assert.True(context.Excludes("workflow.db"));
        Assert.True(context.Excludes("a/b/workflow.db"));
        Assert.True(context.Excludes("docs/other.md"));
        Assert.False(context.Excludes("docs/keep.md"));
        Assert.True(context.Excludes("rooted.txt"));
        Assert.False(context.Excludes("src/rooted.txt"));
        Assert.False(context.Excludes("src/binary/x.cs"));
        Assert.False(context.Excludes(".gitignore"));
    }

    [Fact]
    public void The_Dockerfile_reader_joins_continuations_drops_comments_and_splits_stages()
    {
        var dockerfile = Dockerfile.Parse("""
            # syntax=docker/dockerfile:1
            ARG BASE=1
            FROM sdk:10 AS build
            RUN one \
            # a comment inside a continuation
              two
            ENV A=1 \
                B="two words"
            FROM runtime AS final
            COPY --from=build /app ./
            """);

        Assert.Single(dockerfile.GlobalArgs);
        Assert.Equal(["build", "final"], dockerfile.Stages.Select(s => s.Name));
        Assert.Equal("one    two", dockerfile.Stage("build").All("RUN").Single().Arguments);
        Assert.Equal(["A=1", "B=two words"], dockerfile.Stage("build").All("ENV").Single().Words());
        Assert.Equal("runtime", dockerfile.Final.BaseImage);
    }

    [Fact]
    public async Task The_build_stage_publishes_from_a_clean_copy_of_the_tracked_files()
    {
        var replay = await Replay.Value;

        Assert.True(replay.Failure is null, replay.Failure?.Message);
        Assert.True(File.Exists(Path.Combine(replay.Runtime!.WorkDir, "WorkflowService.dll")),
            "the runtime stage's working folder holds WorkflowService.dll");
    }

    [Fact]
    public async Task Every_project_the_host_references_reaches_the_image()
    {
        var replay = await Replay.Value;
        Assert.True(replay.Failure is null, replay.Failure?.Message);

        var missing = HostProjectReferences()
            .Select(project => Path.GetFileNameWithoutExtension(project) + ".dll")
            .Where(assembly => !File.Exists(Path.Combine(replay.Runtime!.WorkDir, assembly)))
            .ToList();

        Assert.True(HostProjectReferences().Count >= 5, "the host references its engine, stores, transports and diagrams");
        Assert.True(missing.Count == 0, $"not in the image: {string.Join(", ", missing)}");
    }

    [Fact]
    public async Task The_published_service_is_compiled_ahead_of_time()
    {
        var replay = await Replay.Value;
        Assert.True(replay.Failure is null, replay.Failure?.Message);

        foreach (var assembly in (string[])["WorkflowService.dll", "WorkflowService.Engine.dll", "WorkflowService.Storage.Relational.dll"])
        {
            using var reader = new PEReader(File.OpenRead(Path.Combine(replay.Runtime!.WorkDir, assembly)));
            Assert.True(reader.PEHeaders.CorHeader?.ManagedNativeHeaderDirectory.Size > 0, $"{assembly} carries ReadyToRun code");
        }
    }

    [Fact]
    public async Task The_image_runs_as_a_numeric_non_root_user_and_listens_on_8080()
    {
        var dockerfile = Dockerfile.Parse(await File.ReadAllTextAsync(Repository.Path("Dockerfile")));
        var final = dockerfile.Final;

        // The aspnet image sets ASPNETCORE_HTTP_PORTS=8080 and defines APP_UID, the numeric id of its "app" user.
        Assert.StartsWith("mcr.microsoft.com/dotnet/aspnet:", final.BaseImage, StringComparison.Ordinal);
        Assert.Equal("$APP_UID", final.All("USER").Last().Arguments.Trim());
        Assert.Contains("8080", final.All("EXPOSE").SelectMany(e => e.Words()));
        Assert.DoesNotContain(final.All("ENV").SelectMany(e => e.Words()),
            w => w.StartsWith("ASPNETCORE_URLS=", StringComparison.Ordinal) || w.StartsWith("ASPNETCORE_HTTP_PORTS=", StringComparison.Ordinal));
        // Each volume exists in the image owned by that user, so that a fresh named volume inherits the ownership.
        foreach (var volume in final.All("VOLUME").SelectMany(v => v.Words()))
        {
            Assert.Contains(final.All("RUN"), run =>
                run.Arguments.Contains($"mkdir -p {volume}", StringComparison.Ordinal)
                && run.Arguments.Contains($"chown app:app {volume}", StringComparison.Ordinal));
        }
    }

    [Fact]
    public async Task The_published_service_answers_ready_with_the_runtime_stage_environment()
    {
        var replay = await Replay.Value;
        Assert.True(replay.Failure is null, replay.Failure?.Message);
        var runtime = replay.Runtime!;

        Assert.Equal(["dotnet", "WorkflowService.dll"], runtime.Entrypoint);
        var settings = runtime.Environment.ToDictionary(e => e.Key, e => (string?)e.Value, StringComparer.Ordinal);
        Assert.Equal("Sqlite", settings["Store__Provider"]);

        // The aspnet image's ASPNETCORE_HTTP_PORTS (8080 there) set to a free port here, as `docker run -p` would map it.
        await using var node = await TestServiceProcess.StartAsync("image-replay", settings, ListenAddress.AspNetCoreHttpPorts,
            Path.Combine(runtime.WorkDir, "WorkflowService.dll"), runtime.WorkDir);
        using var client = node.CreateClient();
        using var ready = await client.GetAsync("/health/ready");

        Assert.Equal(System.Net.HttpStatusCode.OK, ready.StatusCode);
        // The store's file is where the image's configuration puts it: on the /data volume.
        var database = DockerfileReplay.Under(runtime.FileSystem, "/data/workflow.db");
        Assert.True(File.Exists(database), $"the SQLite store is on the volume ({database})");
    }

    [Fact]
    public async Task The_image_builds_and_serves_with_a_Docker_engine()
    {
        var docker = ExternalTools.OnPath("docker", "docker", "install a Docker engine; without one the replay tests stand for this build");
        var info = await ExternalTools.RunAsync(docker, ["info", "--format", "{{.ServerVersion}}"], Repository.Root, TimeSpan.FromSeconds(30));
        if (info.ExitCode != 0)
        {
            ExternalTools.Unavailable("docker", $"no Docker engine answers (docker info: {info.Error.Trim()}); the replay tests stand for this build");
        }

        var tag = $"workflow-service:image-test-{Guid.NewGuid():N}";
        var build = await ExternalTools.RunAsync(docker, ["build", "-t", tag, "."], Repository.Root, TimeSpan.FromMinutes(20));
        Assert.True(build.ExitCode == 0, $"docker build failed: {build}");
        var apiKey = TestApiKey.Create("image-test", "admin");
        var port = LoopbackPort.Free().ToString(CultureInfo.InvariantCulture);
        string[] run = ["run", "-d", "--rm", "-p", $"127.0.0.1:{port}:8080",
            .. TestApiKey.Settings(apiKey).SelectMany(s => new[] { "-e", $"{s.Key.Replace(":", "__", StringComparison.Ordinal)}={s.Value}" }), tag];
        var started = await ExternalTools.RunAsync(docker, run, Repository.Root, TimeSpan.FromMinutes(2));
        Assert.True(started.ExitCode == 0, $"docker run failed: {started}");
        var container = started.Output.Trim();
        try
        {
            using var client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(5) };
            await Eventually.WaitUntilAsync(async () =>
            {
                try
                {
                    using var ready = await client.GetAsync("/health/ready");
                    return ready.IsSuccessStatusCode;
                }
                catch (HttpRequestException)
                {
                    return false;
                }
            }, TimeSpan.FromSeconds(60), "the container's /health/ready");
            var user = await ExternalTools.RunAsync(docker, ["exec", container, "id", "-u"], Repository.Root, TimeSpan.FromSeconds(30));
            Assert.NotEqual("0", user.Output.Trim());
        }
        finally
        {
            await ExternalTools.RunAsync(docker, ["rm", "-f", container], Repository.Root, TimeSpan.FromMinutes(1));
            await ExternalTools.RunAsync(docker, ["rmi", "-f", tag], Repository.Root, TimeSpan.FromMinutes(1));
        }
    }

    /// <summary>Every project the host references, directly or through another project.</summary>
    private static IReadOnlyList<string> HostProjectReferences()
    {
        var found = new SortedSet<string>(StringComparer.Ordinal);
        var pending = new Stack<string>([Repository.Path("src", "WorkflowService", "WorkflowService.csproj")]);
        while (pending.Count > 0)
        {
            var project = pending.Pop();
            foreach (var reference in XDocument.Load(project).Descendants("ProjectReference"))
            {
                var path = Path.GetFullPath(Path.Combine(Path.GetDirectoryName(project)!,
                    reference.Attribute("Include")!.Value.Replace('\\', '/')));
                if (found.Add(path))
                {
                    pending.Push(path);
                }
            }
        }

        return [.. found];
    }

    private static async Task<ImageReplay> ReplayAsync()
    {
        var root = Directory.CreateTempSubdirectory("workflow-image-replay-").FullName;
        // The replay's folders (a published service, restored projects) stay until the test process ends: the started
        // service runs from them.
        AppDomain.CurrentDomain.ProcessExit += (_, _) =>
        {
            try
            {
                Directory.Delete(root, recursive: true);
            }
            catch (IOException)
            {
                // Left to the system's temporary-file cleanup.
            }
            catch (UnauthorizedAccessException)
            {
                // Likewise.
            }
        };
        var context = Directory.CreateDirectory(Path.Combine(root, "context")).FullName;
        foreach (var file in await DockerBuildContext.TrackedFilesAsync(Repository.Root))
        {
            var copy = Path.Combine(context, file);
            Directory.CreateDirectory(Path.GetDirectoryName(copy)!);
            File.Copy(Repository.Path(file), copy);
        }

        var dockerfile = Dockerfile.Parse(await File.ReadAllTextAsync(Path.Combine(context, "Dockerfile")));
        var replay = new DockerfileReplay(dockerfile, context, Path.Combine(root, "stages"));
        try
        {
            return new ImageReplay(await replay.ReplayAsync(dockerfile.Final, StageMode.Layout), null);
        }
        catch (ReplayFailedException failed)
        {
            return new ImageReplay(null, failed);
        }
    }

    private sealed record ImageReplay(ReplayedStage? Runtime, ReplayFailedException? Failure);
}
