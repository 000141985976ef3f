#!/bin/bash
# $1: a or b or b2
# Needs a database oxp with schema.sql and funcs.sql applied (psql oxp -f schema.sql -f funcs.sql), run as root (su postgres).
su postgres -c "psql -qAt oxp -c 'TRUNCATE wf_deliveries, wf_delivery_queue, wf_log' -c \"UPDATE wf_positions SET xid = '0', sequence = 0\" -c 'VACUUM ANALYZE' -c 'CHECKPOINT'"
DIR=$(cd "$(dirname "$0")" && pwd)
ins=a_insert.sql; cyc=a_cycle.sql
[ "$1" != a ] && ins=b_insert.sql && cyc=${1}_cycle.sql
w0=$(su postgres -c "psql -qAt oxp -c 'select pg_current_wal_lsn()'")
su postgres -c "PGOPTIONS='-c synchronous_commit=off' pgbench -n -c 2 -j 2 -T 30 -f $DIR/$ins@5 -f $DIR/$cyc@1 oxp" > /tmp/position-model-$1.out 2>&1
w1=$(su postgres -c "psql -qAt oxp -c 'select pg_current_wal_lsn()'")
su postgres -c "psql -qAt oxp -c \"select '$1', pg_wal_lsn_diff('$w1','$w0') wal, (select count(*) from wf_deliveries)+(select count(*) from wf_log) written, (select count(*) from wf_delivery_queue) queued, (select count(*) from wf_log l, wf_positions p where (l.xid, l.sequence) > (p.xid, p.sequence)) unread\""
grep -E "^tps" /tmp/position-model-$1.out | head -12
