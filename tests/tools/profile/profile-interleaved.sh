#!/usr/bin/env bash
# Profiles two builds of the service side by side, both ends, under the interleaved signal-roundtrip load at c64:
#   - the services: Linux perf samples of the whole machine (199 Hz, call graphs), split afterwards by process, with the
#     runtime's perf map so that JIT-compiled frames have names (W^X off in both: perf cannot read the double mapping);
#   - the database: pg_stat_statements, reset before the run, read after it.
# Usage: tests/tools/profile/profile-interleaved.sh OUTPUT_DIR REV [WINDOWS] [WINDOW_OPS]
#   REV  the baseline commit (the runner builds it in a worktree); the other variant is this checkout's build.
# Needs: a Release build of this checkout, perf (apt-get install linux-perf), PostgreSQL on 127.0.0.1:5432 (postgres /
# postgres) with pg_stat_statements preloaded (ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements',
# restart, CREATE EXTENSION pg_stat_statements).
# Writes: OUTPUT_DIR/report (the interleaved report), service-REV.md and service-head.md (tests/tools/profile/fold.py
# over each service's samples), statements.txt.
set -euo pipefail
out="$(mkdir -p "$1" && cd "$1" && pwd)"
rev="$2"
windows="${3:-4}"
window_ops="${4:-4000}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
psql_admin() { PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -d postgres -qAt "$@"; }

psql_admin -c 'SELECT pg_stat_statements_reset()' >/dev/null
export DOTNET_PerfMapEnabled=1 DOTNET_EnableWriteXorExecute=0
perf record -a -g -F 199 -o "$out/perf.data" > "$out/perf.log" 2>&1 &
perf=$!
(while sleep 2; do ps -eo pid,args | grep 'WorkflowService.dll' | grep -v grep; done) > "$out/ps.txt" &
watcher=$!
(cd "$root" && dotnet run -c Release --no-build --project tests/WorkflowService.Benchmarks -- interleave --backend postgres \
  --variants "at-$rev,off" --windows "$windows" --window-ops "$window_ops" --output "$out/report") > "$out/runner.log" 2>&1 || true
kill -INT "$perf"; kill "$watcher"; wait "$perf" || true

head_pid=$(grep " $root/src/WorkflowService/bin/" "$out/ps.txt" | awk '{print $1}' | sort -u | head -n1)
base_pid=$(grep "wf-at-$rev" "$out/ps.txt" | awk '{print $1}' | sort -u | head -n1)
perf script -i "$out/perf.data" --pid "$head_pid" 2>/dev/null | "$here/fold.py" 30 > "$out/service-head.md"
perf script -i "$out/perf.data" --pid "$base_pid" 2>/dev/null | "$here/fold.py" 30 > "$out/service-$rev.md"
psql_admin -F ' | ' -c "SELECT calls, round(total_exec_time::numeric, 1) AS total_ms, round(mean_exec_time::numeric, 3) AS mean_ms,
    rows, left(regexp_replace(query, '\s+', ' ', 'g'), 160) FROM pg_stat_statements
    WHERE query NOT ILIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC LIMIT 25" > "$out/statements.txt"
echo "wrote $out/service-head.md, $out/service-$rev.md, $out/statements.txt and $out/report"
