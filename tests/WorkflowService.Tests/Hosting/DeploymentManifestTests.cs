using System.Collections.Concurrent;
using System.Text.Json;
using System.Text.RegularExpressions;
using System.Xml.Linq;
using WorkflowService.Tests.Infrastructure;

namespace WorkflowService.Tests.Hosting;

/// <summary>
/// The deployment files as an operator meets them: every Kustomize overlay under deploy/overlays, rendered by kubectl
/// with the secret files deploy/init-secrets.sh writes, and every compose file under compose/, validated by
/// tests/tools/validate-manifests.mjs (the Kubernetes OpenAPI schemas and unknown fields; the Compose specification's
/// schema), and the properties issue 13 asks of them.
/// </summary>
/// <remarks>
/// The overlays' secretGenerator needs its files at render time, and no secret is committed: each overlay is rendered
/// from a temporary copy of deploy/ (without any secrets/ folder an operator may have there), in which the documented
/// deploy/init-secrets.sh writes a fresh API key hash and, for postgres, a placeholder connection string.
/// </remarks>
public sealed class DeploymentManifestTests
{
    private const string PlaceholderConnectionString =
        "Host=postgresql;Database=workflow;Username=workflow;Password=placeholder-written-by-the-test";

    private static readonly TimeSpan ToolTimeout = TimeSpan.FromMinutes(3);
    private static readonly ConcurrentDictionary<string, Lazy<Task<Validation>>> Renders = new();
    private static readonly Lazy<Task<Validation>> ComposeValidation = new(ValidateComposeFilesAsync);

    public static TheoryData<string> Overlays()
    {
        var data = new TheoryData<string>();
        foreach (var folder in Directory.GetDirectories(Repository.Path("deploy", "overlays")).Order(StringComparer.Ordinal))
        {
            data.Add(Path.GetFileName(folder));
        }

        return data;
    }

    [Fact]
    public void The_overlays_are_the_embedded_single_node_and_postgresql() =>
        Assert.Equal(["embedded", "postgres"], Overlays().Select(row => row.Data));

    [Theory]
    [MemberData(nameof(Overlays))]
    public async Task Every_object_of_the_overlay_validates_against_the_Kubernetes_schemas_with_no_unknown_field(string overlay)
    {
        var rendered = await RenderAsync(overlay);

        Assert.True(rendered.Errors.Count == 0 && rendered.Run.ExitCode == 0, $"{overlay}:\n{string.Join('\n', rendered.Errors)}\n{rendered.Run.Error}");
        Assert.Superset(
            new HashSet<string> { "Deployment", "Service", "Secret", "NetworkPolicy" },
            rendered.Objects.Select(o => Text(o, "kind") ?? "(none)").ToHashSet());
    }

    [Fact]
    public async Task Every_compose_file_validates_against_the_Compose_specification()
    {
        var validation = await ValidateComposeAsync();

        Assert.True(validation.Errors.Count == 0 && validation.Run.ExitCode == 0, string.Join('\n', validation.Errors) + validation.Run.Error);
        Assert.Equal(ComposeFiles().Length, validation.Objects.Count);
    }

    [Fact]
    public async Task The_Kubernetes_validator_rejects_an_unknown_field_a_wrong_type_and_an_unknown_kind_naming_each()
    {
        var broken = """
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: broken
            spec:
              replicass: 2
              selector:
                matchLabels: { app: broken }
              template:
                metadata:
                  labels: { app: broken }
                spec:
                  containers:
                    - name: broken
                      image: workflow-service:0.0.1
                      imagePullPolicyy: Always
                      ports:
                        - containerPort: eighty
            ---
            apiVersion: v1
            kind: Servise
            metadata:
              name: broken
            """;

        var validation = await ValidateTextAsync("kubernetes", "broken.yaml", broken);

        Assert.Equal(1, validation.Run.ExitCode);
        Assert.Contains(validation.Errors, e => e.Contains("unknown field: spec.replicass", StringComparison.Ordinal));
        Assert.Contains(validation.Errors, e => e.Contains("unknown field: spec.template.spec.containers[0].imagePullPolicyy", StringComparison.Ordinal));
        Assert.Contains(validation.Errors, e => e.Contains("containers/0/ports/0/containerPort must be integer", StringComparison.Ordinal));
        Assert.Contains(validation.Errors, e => e.Contains("no Kubernetes model for apiVersion 'v1', kind 'Servise'", StringComparison.Ordinal));
    }

    [Fact]
    public async Task The_Compose_validator_rejects_an_unknown_field_and_a_wrong_type_naming_each()
    {
        var broken = """
            name: broken
            services:
              workflow:
                image: workflow-service:0.0.1
                environmen:
                  Store__Provider: Sqlite
                stop_grace_period: 30s
                ports: 8080
            """;

        var validation = await ValidateTextAsync("compose", "compose.yaml", broken);

        Assert.Equal(1, validation.Run.ExitCode);
        Assert.Contains(validation.Errors, e => e.Contains("services.workflow: must NOT have additional properties 'environmen'", StringComparison.Ordinal));
        Assert.Contains(validation.Errors, e => e.Contains("services.workflow.ports: must be array", StringComparison.Ordinal));
    }

    [Fact]
    public async Task The_postgres_overlay_runs_at_least_two_spread_replicas_and_rolls_them_without_losing_capacity()
    {
        var rendered = await RenderAsync("postgres");
        var deployment = rendered.Single("Deployment");
        var podLabels = At(deployment, "spec", "template", "metadata", "labels");

        var replicas = At(deployment, "spec", "replicas").GetInt32();
        Assert.True(replicas >= 2, $"the postgres overlay runs several replicas (it runs {replicas})");
        Assert.Equal("RollingUpdate", Text(deployment, "spec", "strategy", "type"));
        Assert.True(IsZero(At(deployment, "spec", "strategy", "rollingUpdate", "maxUnavailable")), "maxUnavailable must be 0");

        var budget = rendered.Single("PodDisruptionBudget");
        Assert.True(Selects(At(budget, "spec", "selector", "matchLabels"), podLabels), "the PodDisruptionBudget selects the pods");
        Assert.True(
            At(budget, "spec", "maxUnavailable") is { ValueKind: JsonValueKind.Number } most ? most.GetInt32() < replicas
                : At(budget, "spec", "minAvailable").GetInt32() >= 1,
            "the PodDisruptionBudget keeps at least one replica");

        var spread = At(deployment, "spec", "template", "spec", "topologySpreadConstraints").EnumerateArray()
            .Single(c => Text(c, "topologyKey") == "kubernetes.io/hostname");
        Assert.True(Selects(At(spread, "labelSelector", "matchLabels"), podLabels), "the spread counts the service's pods");
    }

    [Fact]
    public async Task The_postgres_overlay_lets_in_only_port_8080_from_chosen_peers_and_out_only_PostgreSQL_and_DNS()
    {
        var rendered = await RenderAsync("postgres");
        var podLabels = At(rendered.Single("Deployment"), "spec", "template", "metadata", "labels");
        var policies = rendered.All("NetworkPolicy").Where(p => Selects(At(p, "spec", "podSelector", "matchLabels"), podLabels)).ToList();

        var types = policies.SelectMany(p => At(p, "spec", "policyTypes").EnumerateArray().Select(t => t.GetString())).ToHashSet();
        Assert.Superset(new HashSet<string?> { "Ingress", "Egress" }, types);

        var ingress = policies.SelectMany(p => Items(p, "spec", "ingress")).ToList();
        Assert.NotEmpty(ingress);
        Assert.All(ingress, rule =>
        {
            Assert.NotEmpty(Items(rule, "from")); // a rule without peers would let in anyone
            Assert.Equal(["TCP/8080"], Ports(rule));
        });

        var egress = policies.SelectMany(p => Items(p, "spec", "egress")).ToList();
        Assert.All(egress, rule => Assert.NotEmpty(Items(rule, "to")));
        Assert.Equal(["TCP/53", "TCP/5432", "UDP/53"], egress.SelectMany(Ports).Distinct().Order(StringComparer.Ordinal));
    }

    [Fact]
    public async Task The_embedded_overlay_runs_one_replica_recreated_on_its_own_volume()
    {
        var rendered = await RenderAsync("embedded");
        var deployment = rendered.Single("Deployment");
        var pod = At(deployment, "spec", "template", "spec");

        Assert.Equal(1, At(deployment, "spec", "replicas").GetInt32());
        Assert.Equal("Recreate", Text(deployment, "spec", "strategy", "type"));
        var claim = rendered.Single("PersistentVolumeClaim");
        Assert.Equal(["ReadWriteOnce"], At(claim, "spec", "accessModes").EnumerateArray().Select(m => m.GetString()));
        var volume = Items(pod, "volumes").Single(v => Text(v, "persistentVolumeClaim", "claimName") == Text(claim, "metadata", "name"));
        var mount = Items(Container(deployment), "volumeMounts").Single(m => Text(m, "name") == Text(volume, "name"));
        Assert.Equal("/data", Text(mount, "mountPath"));
        Assert.Equal("Data Source=/data/workflow.db", Env(deployment)["Store__ConnectionString"]);
    }

    [Theory]
    [MemberData(nameof(Overlays))]
    public async Task Every_overlay_probes_health_bounds_resources_and_runs_non_root_on_a_read_only_root(string overlay)
    {
        var deployment = (await RenderAsync(overlay)).Single("Deployment");
        var container = Container(deployment);

        Assert.Equal(8080, Items(container, "ports").Single().GetProperty("containerPort").GetInt32());
        Assert.Equal("/health/live", Text(container, "startupProbe", "httpGet", "path"));
        Assert.Equal("/health/live", Text(container, "livenessProbe", "httpGet", "path"));
        Assert.Equal("/health/ready", Text(container, "readinessProbe", "httpGet", "path"));
        foreach (var probe in new[] { "startupProbe", "livenessProbe", "readinessProbe" })
        {
            var port = At(container, probe, "httpGet", "port");
            Assert.True(port.ToString() is "http" or "8080", $"{probe} probes port 8080 (it probes {port})");
        }

        foreach (var resource in new[] { "cpu", "memory" })
        {
            Assert.False(string.IsNullOrEmpty(Text(container, "resources", "requests", resource)), $"requests.{resource}");
            Assert.False(string.IsNullOrEmpty(Text(container, "resources", "limits", resource)), $"limits.{resource}");
        }

        Assert.True(At(deployment, "spec", "template", "spec", "securityContext", "runAsNonRoot").GetBoolean());
        Assert.True(At(container, "securityContext", "readOnlyRootFilesystem").GetBoolean());
        Assert.False(At(container, "securityContext", "allowPrivilegeEscalation").GetBoolean());
        Assert.Equal(["ALL"], At(container, "securityContext", "capabilities", "drop").EnumerateArray().Select(c => c.GetString()));
        // Hosting listens where the aspnet image's ASPNETCORE_HTTP_PORTS says (8080): nothing here overrides it.
        Assert.DoesNotContain(Env(deployment).Keys, name => name is "Urls" or "ASPNETCORE_URLS" or "ASPNETCORE_HTTP_PORTS");
    }

    [Theory]
    [MemberData(nameof(Overlays))]
    public async Task Every_overlay_mounts_its_generated_Secret_in_run_secrets_one_setting_per_file_and_no_secret_elsewhere(string overlay)
    {
        var rendered = await RenderAsync(overlay);
        var deployment = rendered.Single("Deployment");
        var secret = rendered.Single("Secret");

        var volume = Items(At(deployment, "spec", "template", "spec"), "volumes")
            .Single(v => Text(v, "secret", "secretName") == Text(secret, "metadata", "name"));
        var mount = Items(Container(deployment), "volumeMounts").Single(m => Text(m, "name") == Text(volume, "name"));
        Assert.Equal("/run/secrets", Text(mount, "mountPath"));

        var keys = At(secret, "data").EnumerateObject().Select(p => p.Name).Order(StringComparer.Ordinal).ToList();
        var expected = overlay == "postgres"
            ? new[] { "Authentication__ApiKeys__0__Hash", "Store__ConnectionString" }
            : ["Authentication__ApiKeys__0__Hash"];
        Assert.Equal(expected, keys);
        var env = Env(deployment);
        Assert.DoesNotContain(env, e => e.Value.Contains("password=", StringComparison.OrdinalIgnoreCase));
        Assert.DoesNotContain(env.Keys, name => keys.Contains(name)); // each secret setting comes from its file only
    }

    [Fact]
    public async Task Every_image_is_tagged_with_the_version_of_Directory_Build_props_never_latest()
    {
        var version = Version();
        foreach (var overlay in Overlays().Select(row => row.Data))
        {
            var rendered = await RenderAsync(overlay);
            foreach (var workload in rendered.Objects.Where(o => At(o, "spec", "template", "spec").ValueKind == JsonValueKind.Object))
            {
                foreach (var container in Items(At(workload, "spec", "template", "spec"), "containers")
                             .Concat(Items(At(workload, "spec", "template", "spec"), "initContainers")))
                {
                    // Any registry (images: newName), but the service's image at the version, never latest or untagged.
                    var image = Text(container, "image") ?? string.Empty;
                    Assert.Equal($"workflow-service:{version}", image[(image.LastIndexOf('/') + 1)..]);
                }
            }
        }

        var compose = await ValidateComposeAsync();
        foreach (var file in compose.Objects)
        {
            foreach (var service in At(file, "services").EnumerateObject())
            {
                var image = Text(service.Value, "image");
                Assert.False(image is null, $"{service.Name}: a service without image: runs an image Compose names and tags latest");
                // ${VARIABLE:-default} runs the default unless the operator sets the variable.
                var resolved = Regex.Replace(image, @"\$\{[A-Za-z_][A-Za-z0-9_]*:-([^}]*)\}", "$1");
                var tag = resolved[(resolved.LastIndexOf('/') + 1)..].Split(':') is [_, var t] ? t : null;
                Assert.False(tag is null or "latest", $"{service.Name}: image {image} must carry a version tag");
                if (At(service.Value, "build").ValueKind != JsonValueKind.Undefined)
                {
                    Assert.Equal($"workflow-service:{version}", resolved);
                }
            }
        }
    }

    [Fact]
    public async Task Compose_files_keep_their_project_name_and_hold_no_password()
    {
        var compose = await ValidateComposeAsync();

        Assert.NotEmpty(compose.Objects);
        foreach (var file in compose.Objects)
        {
            Assert.False(string.IsNullOrEmpty(Text(file, "name")), "every compose file keeps its top-level name:");
            foreach (var service in At(file, "services").EnumerateObject())
            {
                foreach (var (name, value) in ComposeEnvironment(service.Value))
                {
                    Assert.False(
                        Regex.IsMatch(name, "PASSWORD|PASSWD|SECRET|TOKEN", RegexOptions.IgnoreCase) && !name.EndsWith("_FILE", StringComparison.Ordinal),
                        $"{service.Name}: {name} is set inline; mount it as a secret (a *_FILE variable or /run/secrets/<setting>)");
                    Assert.False(value.Contains("password=", StringComparison.OrdinalIgnoreCase), $"{service.Name}: {name} holds a password");
                }
            }

            var secrets = At(file, "secrets");
            foreach (var secret in secrets.ValueKind == JsonValueKind.Object ? [.. secrets.EnumerateObject()] : Array.Empty<JsonProperty>())
            {
                Assert.False(string.IsNullOrEmpty(Text(secret.Value, "file")), $"secret {secret.Name} comes from a file init-secrets.sh writes");
            }
        }
    }

    [Fact]
    public async Task Compose_init_secrets_writes_every_secret_the_compose_files_mount_and_adds_missing_ones_to_an_older_folder()
    {
        var shell = ExternalTools.OnPath("sh", "sh", "compose/init-secrets.sh, a POSIX sh script, writes the compose secrets");
        var compose = await ValidateComposeAsync();
        var mounted = compose.Objects
            .Select(file => At(file, "secrets"))
            .Where(secrets => secrets.ValueKind == JsonValueKind.Object)
            .SelectMany(secrets => secrets.EnumerateObject().Select(s => Path.GetFileName(Text(s.Value, "file")!)))
            .ToHashSet();
        Assert.Contains("WakeUp__Redis__ConnectionString", mounted);
        var work = Directory.CreateTempSubdirectory("compose-secrets-");
        try
        {
            async Task InitAsync()
            {
                var run = await ExternalTools.RunAsync(shell, [Repository.Path("compose", "init-secrets.sh")], work.FullName, ToolTimeout,
                    new Dictionary<string, string?> { ["WORKFLOW_COMPOSE_SECRETS"] = work.FullName });
                Assert.True(run.ExitCode == 0, $"compose/init-secrets.sh failed: {run}");
            }

            await InitAsync();
            Assert.All(mounted, name => Assert.True(new FileInfo(Path.Combine(work.FullName, name)) is { Exists: true, Length: > 0 }, $"{name} was not written"));
            var key = await File.ReadAllTextAsync(Path.Combine(work.FullName, "api-key"));
            var redis = await File.ReadAllTextAsync(Path.Combine(work.FullName, "WakeUp__Redis__ConnectionString"));
            Assert.Contains($"password={await File.ReadAllTextAsync(Path.Combine(work.FullName, "redis-password"))}", redis, StringComparison.Ordinal);

            // A folder an older release wrote has no Redis secrets: they are added, and the API key is kept; a file derived
            // from a kept password (lost, say, to an interrupted run) is written again from it.
            File.Delete(Path.Combine(work.FullName, "redis-password"));
            File.Delete(Path.Combine(work.FullName, "WakeUp__Redis__ConnectionString"));
            File.Delete(Path.Combine(work.FullName, "Store__ConnectionString"));
            await InitAsync();
            Assert.Equal(key, await File.ReadAllTextAsync(Path.Combine(work.FullName, "api-key")));
            Assert.True(File.Exists(Path.Combine(work.FullName, "WakeUp__Redis__ConnectionString")));
            Assert.NotEqual(redis, await File.ReadAllTextAsync(Path.Combine(work.FullName, "WakeUp__Redis__ConnectionString")));
            Assert.EndsWith($"Password={await File.ReadAllTextAsync(Path.Combine(work.FullName, "postgres-password"))}",
                await File.ReadAllTextAsync(Path.Combine(work.FullName, "Store__ConnectionString")), StringComparison.Ordinal);
        }
        finally
        {
            work.Delete(recursive: true);
        }
    }

    // ---------------------------------------------------------------------------------------------------- helpers

    private static string Version() =>
        XDocument.Load(Repository.Path("Directory.Build.props")).Descendants("Version").Single().Value;

    private static string[] ComposeFiles() =>
        Directory.GetFiles(Repository.Path("compose"), "*.*", SearchOption.AllDirectories)
            .Where(f => Regex.IsMatch(Path.GetFileName(f), @"^(docker-)?compose(\.[\w-]+)?\.ya?ml$"))
            .Order(StringComparer.Ordinal)
            .ToArray();

    /// <summary>The validator's command: Node.js and the script, once the npm tools of tests/tools are installed.</summary>
    private static (string Node, string Script) Validator()
    {
        var node = ExternalTools.OnPath("node", "npm", "install Node.js 20 or later");
        ExternalTools.Npm("dclint"); // present once `npm ci --prefix tests/tools` installed the validator's packages
        return (node, Path.Combine(ExternalTools.NpmProject, "validate-manifests.mjs"));
    }

    private static Task<Validation> RenderAsync(string overlay)
    {
        var kubectl = ExternalTools.OnPath("kubectl", "kubectl", "install kubectl (its built-in kustomize renders the overlays)");
        var shell = ExternalTools.OnPath("sh", "sh", "deploy/init-secrets.sh, a POSIX sh script, writes the overlays' secret files");
        var validator = Validator();
        return Renders.GetOrAdd(overlay, _ => new Lazy<Task<Validation>>(() => RenderAndValidateAsync(overlay, kubectl, shell, validator))).Value;
    }

    private static async Task<Validation> RenderAndValidateAsync(string overlay, string kubectl, string shell, (string Node, string Script) validator)
    {
        var work = Directory.CreateTempSubdirectory("deploy-manifests-");
        try
        {
            var deploy = Path.Combine(work.FullName, "deploy");
            CopyWithoutSecrets(Repository.Path("deploy"), deploy);
            var init = await ExternalTools.RunAsync(
                shell, [Path.Combine(deploy, "init-secrets.sh"), overlay], work.FullName, ToolTimeout,
                new Dictionary<string, string?> { ["WORKFLOW_STORE_CONNECTION_STRING"] = PlaceholderConnectionString });
            if (init.ExitCode != 0)
            {
                throw new InvalidOperationException($"deploy/init-secrets.sh {overlay} failed: {init}");
            }

            var render = await ExternalTools.RunAsync(kubectl, ["kustomize", Path.Combine(deploy, "overlays", overlay)], work.FullName, ToolTimeout);
            if (render.ExitCode != 0)
            {
                throw new InvalidOperationException($"kubectl kustomize deploy/overlays/{overlay} failed: {render}");
            }

            var manifest = Path.Combine(work.FullName, $"{overlay}.yaml");
            await File.WriteAllTextAsync(manifest, render.Output);
            return await ValidateAsync(validator, "kubernetes", [manifest], work.FullName);
        }
        finally
        {
            work.Delete(recursive: true);
        }
    }

    private static Task<Validation> ValidateComposeAsync()
    {
        Validator();
        return ComposeValidation.Value;
    }

    private static Task<Validation> ValidateComposeFilesAsync() =>
        ValidateAsync(Validator(), "compose", ComposeFiles(), Repository.Root);

    private static async Task<Validation> ValidateTextAsync(string mode, string fileName, string text)
    {
        var validator = Validator();
        var work = Directory.CreateTempSubdirectory("deploy-manifests-");
        try
        {
            var file = Path.Combine(work.FullName, fileName);
            await File.WriteAllTextAsync(file, text);
            return await ValidateAsync(validator, mode, [file], work.FullName);
        }
        finally
        {
            work.Delete(recursive: true);
        }
    }

    private static async Task<Validation> ValidateAsync((string Node, string Script) validator, string mode, string[] files, string workingDirectory)
    {
        var run = await ExternalTools.RunAsync(validator.Node, [validator.Script, mode, .. files], workingDirectory, ToolTimeout);
        if (run.ExitCode is not (0 or 1))
        {
            throw new InvalidOperationException($"validate-manifests.mjs {mode} did not run: {run}");
        }

        using var result = JsonDocument.Parse(run.Output);
        var objects = result.RootElement.GetProperty("documents").EnumerateArray().Select(d => d.GetProperty("object").Clone()).ToList();
        var errors = result.RootElement.GetProperty("errors").EnumerateArray()
            .Select(e => $"{Path.GetFileName(e.GetProperty("file").GetString())} {e.GetProperty("document")}: {e.GetProperty("message").GetString()}")
            .ToList();
        return new Validation(run, objects, errors);
    }

    /// <summary>Copies deploy/ but no secrets/ folder: an operator's real secret files never leave their checkout.</summary>
    private static void CopyWithoutSecrets(string from, string to)
    {
        Directory.CreateDirectory(to);
        foreach (var file in Directory.GetFiles(from))
        {
            File.Copy(file, Path.Combine(to, Path.GetFileName(file)));
        }

        foreach (var folder in Directory.GetDirectories(from).Where(d => Path.GetFileName(d) != "secrets"))
        {
            CopyWithoutSecrets(folder, Path.Combine(to, Path.GetFileName(folder)));
        }
    }

    private static JsonElement At(JsonElement element, params string[] path)
    {
        foreach (var name in path)
        {
            if (element.ValueKind != JsonValueKind.Object || !element.TryGetProperty(name, out element))
            {
                return default;
            }
        }

        return element;
    }

    private static string? Text(JsonElement element, params string[] path) =>
        At(element, path) is { ValueKind: JsonValueKind.String } value ? value.GetString() : null;

    private static JsonElement[] Items(JsonElement element, params string[] path) =>
        At(element, path) is { ValueKind: JsonValueKind.Array } array ? [.. array.EnumerateArray()] : [];

    private static bool IsZero(JsonElement value) =>
        value.ValueKind == JsonValueKind.Number ? value.GetInt32() == 0 : value.GetString() is "0" or "0%";

    /// <summary>Whether the selector's labels are all on the pods.</summary>
    private static bool Selects(JsonElement selector, JsonElement podLabels) =>
        selector.ValueKind == JsonValueKind.Object && selector.EnumerateObject().Any()
        && selector.EnumerateObject().All(l => Text(podLabels, l.Name) == l.Value.GetString());

    private static IEnumerable<string> Ports(JsonElement rule) =>
        Items(rule, "ports").Select(p => $"{Text(p, "protocol") ?? "TCP"}/{At(p, "port")}");

    private static JsonElement Container(JsonElement deployment) =>
        Items(At(deployment, "spec", "template", "spec"), "containers").Single(c => Text(c, "name") == "workflow-service");

    private static Dictionary<string, string> Env(JsonElement deployment) =>
        Items(Container(deployment), "env").ToDictionary(e => Text(e, "name")!, e => Text(e, "value") ?? string.Empty);

    private static IEnumerable<(string Name, string Value)> ComposeEnvironment(JsonElement service)
    {
        var environment = At(service, "environment");
        if (environment.ValueKind == JsonValueKind.Object)
        {
            return environment.EnumerateObject().Select(p => (p.Name, p.Value.ToString()));
        }

        return Items(service, "environment").Select(e => e.GetString()!.Split('=', 2) is [var n, var v] ? (n, v) : (e.GetString()!, string.Empty));
    }

    private sealed record Validation(ToolRun Run, List<JsonElement> Objects, List<string> Errors)
    {
        public IEnumerable<JsonElement> All(string kind) => Objects.Where(o => Text(o, "kind") == kind);

        public JsonElement Single(string kind) => All(kind).Single();
    }
}
