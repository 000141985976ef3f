\set inst random(1, 1000000000)
INSERT INTO wf_log (id, subscription_id, tenant, instance_id, type, body, created_at, status, attempts)
  VALUES (gen_random_uuid(), '00000000-0000-0000-0000-000000000001', '', md5(:inst::text)::uuid, 'instance.started', repeat('x', 900), now(), 'Pending', 0),
         (gen_random_uuid(), '00000000-0000-0000-0000-000000000001', '', md5(:inst::text)::uuid, 'instance.completed', repeat('x', 900), now(), 'Pending', 0);
