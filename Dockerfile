# Workflow Service container image (embedded SQLite store by default).
#
#   docker build -t workflow-service:$(dotnet msbuild src/WorkflowService -getProperty:Version) .   # e.g. :0.13.0
#   docker run -p 8080:8080 -v workflow-data:/data workflow-service:0.13.0
#
# Health: the aspnet runtime image has no curl/wget, so there is deliberately no HEALTHCHECK here (installing curl only
# for that would grow the image and its attack surface). Orchestrators probe the HTTP endpoints instead:
#   liveness  GET /health/live   (the process answers)
#   readiness GET /health/ready  (the store answers; 503 when it does not)
# See deploy/README.md and compose/README.md.

# ------------------------------------------------------------------------------------------------------------- projects
# Every project file under src/, each in its folder, and nothing else. The build stage restores from these alone, so its
# package layer is reused until a project file changes, and a project added to src/ cannot be left out of the restore (a
# COPY line per project left the MongoDB store out: issue 34). This stage runs again when any file in src/ changes, but
# its output is the same until a project file changes, and the build stage's COPY of it is then taken from the cache.
FROM mcr.microsoft.com/dotnet/sdk:10.0 AS projects
WORKDIR /src
COPY src/ src/
RUN find src -type f ! -name '*.csproj' -delete

# ---------------------------------------------------------------------------------------------------------------- build
FROM mcr.microsoft.com/dotnet/sdk:10.0 AS build
WORKDIR /src

# Restore first from the project and props files only, so the package layer is reused until one of them changes.
COPY global.json Directory.Build.props Directory.Packages.props ./
COPY --from=projects /src/src/ src/
# The runtime identifier of the image's platform: ReadyToRun code is compiled for one (buildx sets TARGETARCH). The
# restore names PublishReadyToRun too, so that it fetches the ReadyToRun compiler the --no-restore publish needs.
ARG TARGETARCH=amd64
RUN case "$TARGETARCH" in amd64) echo linux-x64 ;; arm64) echo linux-arm64 ;; *) echo "unsupported TARGETARCH $TARGETARCH" >&2; exit 1 ;; esac > /tmp/rid \
 && dotnet restore src/WorkflowService/WorkflowService.csproj -r "$(cat /tmp/rid)" -p:PublishReadyToRun=true

# Every file the build reads beside src/: the analyzer settings (warnings are errors: without .editorconfig the rules it
# turns off fail the build), the appsettings.json the web project links into its output, and the two docs/ files it
# embeds (the definition schema and its example). tests/WorkflowService.Tests/Hosting/ContainerImageTests.cs replays
# this stage on a clean checkout, so a file missing here fails a test, not an operator's build.
COPY .editorconfig appsettings.json ./
COPY docs/definition.schema.json docs/
COPY docs/examples/signal-roundtrip.json docs/examples/
COPY src/ src/
# ReadyToRun: the assemblies carry code compiled ahead of time, so a fresh container serves at full speed seconds sooner
# instead of JIT-compiling every path under its first load (docs/benchmarks/cold-start-2026-11-26.md); framework-dependent,
# on the aspnet runtime image below.
RUN dotnet publish src/WorkflowService -c Release -r "$(cat /tmp/rid)" --self-contained false -p:PublishReadyToRun=true \
      -o /app --no-restore -p:UseAppHost=false

# -------------------------------------------------------------------------------------------------------------- runtime
FROM mcr.microsoft.com/dotnet/aspnet:10.0 AS runtime
WORKDIR /app

# The SQLite file lives on a volume owned by the image's non-root "app" user (uid/gid $APP_UID = 1654). Creating the
# directory here, owned by app, makes a fresh named volume inherit that ownership when it is first mounted.
RUN mkdir -p /data && chown app:app /data

COPY --from=build /app ./

# The port is the aspnet image's own: ASPNETCORE_HTTP_PORTS=8080 (ASPNETCORE_URLS or --urls override it, as for any
# ASP.NET Core image). Every other setting comes from appsettings.json and can be overridden with Section__Key variables.
ENV Store__Provider=Sqlite \
    Store__ConnectionString="Data Source=/data/workflow.db"

# The garbage collector sizes its youngest generation from the CPU's last-level cache. Virtual machines often report a
# very large one (260 MB on the 2-core benchmark machine), and the gen0 budget then grows to about 100 MB of memory that
# holds only garbage between collections. 16 MB (hex) keeps collections short and frequent: measured in
# docs/benchmarks/memory-2026-11-27.md. The runtime reads this setting only from the environment. Override it with
# -e DOTNET_GCgen0size=<bytes, hex>.
ENV DOTNET_GCgen0size=0x1000000

# Tiered compilation counts calls only after 100 ms without a new method compiled; under a fresh node's load that quiet
# moment comes late, so hot paths stay on their slower first code. Counting from the first call reached 80 % of warm
# throughput in 17 s instead of 24 s, with the same warm throughput (docs/benchmarks/cold-start-2026-11-27.md).
ENV DOTNET_TC_CallCountingDelayMs=0

EXPOSE 8080
VOLUME /data

# The numeric uid of the "app" user, so that Kubernetes' runAsNonRoot can verify the user is not root.
USER $APP_UID

ENTRYPOINT ["dotnet", "WorkflowService.dll"]
