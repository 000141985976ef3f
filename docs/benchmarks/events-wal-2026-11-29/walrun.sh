#!/bin/bash
# What a run writes to the WAL, by record type: walrun.sh <variants> <output directory>, from the repository's root,
# as root on a machine whose PostgreSQL 15 has pg_walinspect (CREATE EXTENSION pg_walinspect in database postgres).
# The segments must outlive the run: wal_keep_size is raised for it and reset after.
set -e
su postgres -c "psql -qc \"ALTER SYSTEM SET wal_keep_size = '6GB'\" -c 'select pg_reload_conf()'" > /dev/null
L1=$(su postgres -c "psql -Atc 'select pg_current_wal_lsn()'")
dotnet run -c Release --no-build --project tests/WorkflowService.Benchmarks -- interleave --backend postgres --no-build \
  --postgres "Host=127.0.0.1;Port=5432;Username=postgres;Password=postgres;SSL Mode=Disable" \
  --variants "$1" --windows 4 --settle 1 --window-ops 3000 --output "$2" > "$2/log.txt" 2>&1
L2=$(su postgres -c "psql -Atc 'select pg_current_wal_lsn()'")
su postgres -c "psql -c \"select \\\"resource_manager/record_type\\\" as t, count, round(record_size/1024.0/1024,1) rec_mb, round(fpi_size/1024.0/1024,1) fpi_mb, round(combined_size/1024.0/1024,1) mb from pg_get_wal_stats('$L1','$L2', true) where combined_size > 500000 order by combined_size desc\"" > "$2/walstats.txt"
su postgres -c "psql -qc 'ALTER SYSTEM RESET wal_keep_size' -c 'select pg_reload_conf()'" > /dev/null
