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

# ---------------------------------------------------------------------------------------------------------------- build
FROM mcr.microsoft.com/dotnet/sdk:10.0 AS build
WORKDIR /src

# Restore first from the project and props files only, so the package layer is reused until a project file changes.
COPY global.json Directory.Build.props Directory.Packages.props ./
COPY src/WorkflowService.Engine/WorkflowService.Engine.csproj src/WorkflowService.Engine/
COPY src/WorkflowService.Storage.Relational/WorkflowService.Storage.Relational.csproj src/WorkflowService.Storage.Relational/
COPY src/WorkflowService.Diagrams/WorkflowService.Diagrams.csproj src/WorkflowService.Diagrams/
COPY src/WorkflowService.WakeUp.Redis/WorkflowService.WakeUp.Redis.csproj src/WorkflowService.WakeUp.Redis/
COPY src/WorkflowService/WorkflowService.csproj src/WorkflowService/
# The runtime identifier of the image's platform: ReadyToRun code is compiled for one (buildx sets TARGETARCH).
ARG TARGETARCH=amd64
RUN case "$TARGETARCH" in amd64) echo linux-x64 ;; arm64) echo linux-arm64 ;; *) echo "unsupported TARGETARCH $TARGETARCH" >&2; exit 1 ;; esac > /tmp/rid \
 && dotnet restore src/WorkflowService/WorkflowService.csproj -r "$(cat /tmp/rid)"

# The web project links the repository-root appsettings.json into its publish output.
COPY appsettings.json ./
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

EXPOSE 8080
VOLUME /data

# The numeric uid of the "app" user, so that Kubernetes' runAsNonRoot can verify the user is not root.
USER $APP_UID

ENTRYPOINT ["dotnet", "WorkflowService.dll"]
