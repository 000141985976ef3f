CREATE OR REPLACE FUNCTION cycle_a() RETURNS int LANGUAGE plpgsql AS $$
DECLARE ids uuid[]; n int;
BEGIN
  WITH c AS (SELECT q.id FROM wf_delivery_queue q WHERE q.due_at_ms <= 1 AND q.lease_until_ms IS NULL
             AND NOT EXISTS (SELECT 1 FROM wf_delivery_queue e WHERE e.subscription_id = q.subscription_id AND e.instance_id = q.instance_id AND e.sequence < q.sequence)
             ORDER BY q.due_at_ms, q.sequence LIMIT 10 FOR UPDATE SKIP LOCKED),
       u AS (UPDATE wf_delivery_queue q SET lease_owner = 'n', lease_token = 1, lease_until_ms = 9999999999999, attempts = q.attempts + 1
             FROM c WHERE q.id = c.id RETURNING q.id)
  SELECT array_agg(u.id) INTO ids FROM u JOIN wf_deliveries d ON d.id = u.id WHERE length(d.body) > 0;
  IF ids IS NULL THEN RETURN 0; END IF;
  n := array_length(ids, 1);
  FOR i IN 1..n LOOP
    WITH q AS (DELETE FROM wf_delivery_queue WHERE id = ids[i] AND lease_token = 1 AND lease_until_ms IS NOT NULL RETURNING attempts)
    UPDATE wf_deliveries SET attempts = (SELECT q.attempts FROM q), status = 'Delivered', last_status = 200, last_error = NULL,
      delivered_at = now(), latency_ms = 3 WHERE id = ids[i] AND EXISTS (SELECT 1 FROM q);
  END LOOP;
  RETURN n;
END $$;

CREATE OR REPLACE FUNCTION cycle_b(mark boolean) RETURNS int LANGUAGE plpgsql AS $$
DECLARE px xid8; ps bigint; lx xid8; ls bigint; n int; horizon xid8;
BEGIN
  SELECT p.xid, p.sequence INTO px, ps FROM wf_positions p WHERE p.subscription_id = '00000000-0000-0000-0000-000000000001' FOR UPDATE;
  horizon := pg_snapshot_xmin(pg_current_snapshot());
  SELECT count(*), max(t.xid), max(t.sequence) INTO n, lx, ls FROM (
    SELECT l.xid, l.sequence, l.body FROM wf_log l WHERE l.subscription_id = '00000000-0000-0000-0000-000000000001'
      AND (l.xid, l.sequence) > (px, ps) AND l.xid < horizon ORDER BY l.xid, l.sequence LIMIT 10) t WHERE length(t.body) > 0;
  IF n = 0 THEN RETURN 0; END IF;
  -- the last row read (max of a prefix in (xid, sequence) order)
  SELECT l.xid, l.sequence INTO lx, ls FROM wf_log l WHERE l.subscription_id = '00000000-0000-0000-0000-000000000001'
      AND (l.xid, l.sequence) > (px, ps) AND l.xid < horizon ORDER BY l.xid, l.sequence OFFSET n - 1 LIMIT 1;
  IF mark THEN
    UPDATE wf_log SET status = 'Delivered', attempts = 1, last_status = 200, delivered_at = now(), latency_ms = 3
      WHERE subscription_id = '00000000-0000-0000-0000-000000000001' AND (xid, sequence) > (px, ps) AND (xid, sequence) <= (lx, ls);
  END IF;
  UPDATE wf_positions SET xid = lx, sequence = ls WHERE subscription_id = '00000000-0000-0000-0000-000000000001';
  RETURN n;
END $$;
