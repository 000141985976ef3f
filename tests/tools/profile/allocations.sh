#!/usr/bin/env bash
# Where the service allocates per operation under signal-roundtrip-sustained: the runtime's allocation ticks (one about
# every 100 KB, with its call stack) and ASP.NET Core's request events, collected with dotnet-trace for 12 s during the
# scenario's warm-up (64 clients, the same load as the measured part), then read by allocations/AllocationReport.
# Usage: tests/tools/profile/allocations.sh OUTPUT_DIR [runner options, e.g. --service shipped]
# Needs: a Release build of this checkout, dotnet-trace (dotnet tool install -g dotnet-trace), PostgreSQL on
# 127.0.0.1:5432 (postgres / postgres).
# Writes: OUTPUT_DIR/allocations.nettrace, OUTPUT_DIR/allocations.txt (the report), OUTPUT_DIR/runner.log.
set -euo pipefail
out="$(mkdir -p "$1" && cd "$1" && pwd)"
shift
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
trace="${DOTNET_TRACE:-$(command -v dotnet-trace || echo "$HOME/.dotnet/tools/dotnet-trace")}"
(cd "$root" && dotnet run -c Release --no-build --project tests/WorkflowService.Benchmarks -- --backend postgres \
  --only signal-roundtrip-sustained --postgres "Host=127.0.0.1;Port=5432;Username=postgres;Password=postgres" \
  --output "$out/report" "$@") > "$out/runner.log" 2>&1 &
runner=$!
# The scenario's service is the newest WorkflowService process of this checkout once the runner announces the scenario; 15 s into its
# 30-second warm-up the JIT has settled.
for _ in $(seq 1 180); do grep -q '^== postgres' "$out/runner.log" && break; sleep 1; done
sleep 15
pid="$(pgrep -n -f "$root/src/WorkflowService/bin/.*WorkflowService.dll")"
"$trace" collect -p "$pid" --providers 'Microsoft-Windows-DotNETRuntime:0x1:5,Microsoft.AspNetCore.Hosting:0:4' \
  --duration 00:00:00:12 -o "$out/allocations.nettrace" > "$out/trace.log" 2>&1
wait "$runner"
dotnet run -c Release --project "$here/allocations" -- "$out/allocations.nettrace" > "$out/allocations.txt"
head -1 "$out/allocations.txt"
