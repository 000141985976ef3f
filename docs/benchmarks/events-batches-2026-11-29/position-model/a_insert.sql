\set inst random(1, 1000000000)
WITH d AS (INSERT INTO wf_deliveries (id, subscription_id, tenant, instance_id, type, body, created_at, due_at_ms, status, attempts)
  VALUES (gen_random_uuid(), '00000000-0000-0000-0000-000000000001', '', md5(:inst::text)::uuid, 'instance.started', repeat('x', 900), now(), 0, 'Pending', 0),
         (gen_random_uuid(), '00000000-0000-0000-0000-000000000001', '', md5(:inst::text)::uuid, 'instance.completed', repeat('x', 900), now(), 0, 'Pending', 0)
  RETURNING id, subscription_id, instance_id, sequence, due_at_ms)
INSERT INTO wf_delivery_queue (id, subscription_id, instance_id, sequence, due_at_ms, attempts) SELECT id, subscription_id, instance_id, sequence, due_at_ms, 0 FROM d;
