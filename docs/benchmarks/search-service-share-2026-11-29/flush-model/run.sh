#!/bin/sh
# The layout model of search-paths-cost-2026-11-29/layout at the service's concurrency (64 clients): does a table the
# completing update never touches lose less throughput than slot columns when commits wait on WAL flushes?
# Needs the databases flush_none, flush_columns, flush_table made as that README says (base.sql, then columns.sql or
# table.sql). Prints one line per layout and round: workflows/s and WAL bytes per workflow.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
layout="$here/../../search-paths-cost-2026-11-29/layout"
rounds=${ROUNDS:-6}
seconds=${SECONDS_PER_ROUND:-12}
for round in $(seq 1 "$rounds"); do
  # In turns, reversed every other round, so that a drift of the machine falls on all alike.
  order="none columns table"; [ $((round % 2)) -eq 0 ] && order="table columns none"
  for db in $order; do
    before=$(psql -Atc "select pg_current_wal_lsn()" -d "flush_$db")
    tps=$(pgbench -n -M prepared -c 64 -j 2 -T "$seconds" -f "$layout/tx_$db.sql" "flush_$db" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
    after=$(psql -Atc "select pg_current_wal_lsn()" -d "flush_$db")
    wal=$(psql -Atc "select pg_wal_lsn_diff('$after', '$before')" -d "flush_$db")
    echo "$round $db $tps $(echo "$wal / ($tps * $seconds)" | bc)"
  done
done
