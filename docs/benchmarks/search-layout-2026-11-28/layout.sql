-- Search attributes: typed slot columns on the instance row (layout A) against an attribute table (layout B).
-- 1,000,000 instances, two tenants (acme 90 %, other 10 %), four attributes each: customer (keyword), region (keyword),
-- amount (number), submittedAt (datetime). Run on a throwaway database: psql -X -f layout.sql.
\timing on
SET max_parallel_workers_per_gather = 0;  -- the service's queries run on a busy 2-core box: measure one worker

-- Layout A: the instance row with preallocated typed slots, each with a partial index leading with the tenant.
CREATE TABLE a_instances (
  id uuid PRIMARY KEY, tenant varchar(100) NOT NULL, definition_name varchar(100) NOT NULL, status varchar(16) NOT NULL,
  created_at timestamptz NOT NULL, variables_json text NOT NULL,
  kw01 varchar(200), kw02 varchar(200), kw03 varchar(200), kw04 varchar(200), kw05 varchar(200),
  num01 numeric, num02 numeric, num03 numeric, dt01 timestamptz, dt02 timestamptz, dt03 timestamptz,
  bool01 boolean, bool02 boolean, txt01 text, txt02 text);
SELECT setseed(0.28);  -- independent, repeatable values
INSERT INTO a_instances
SELECT md5(g::text)::uuid, CASE WHEN random() < 0.1 THEN 'other' ELSE 'acme' END, 'claim',
       (ARRAY['Running','Waiting','Waiting','Completed','Completed','Completed','Failed','Suspended'])[1 + floor(random() * 8)::int],
       timestamptz '2026-06-01' + g * interval '15 seconds', '{"x":1}',
       'C-' || lpad(floor(random() * 100000)::int::text, 6, '0'), (ARRAY['EU','UK','US','APAC','LATAM'])[1 + floor(random() * 5)::int],
       NULL, NULL, NULL, round((random() * 20000)::numeric, 2), NULL, NULL,
       timestamptz '2026-01-01' + floor(random() * 31536000) * interval '1 second', NULL, NULL, NULL, NULL, NULL, NULL
FROM generate_series(1, 1000000) g;
CREATE INDEX a_tenant_status_created ON a_instances (tenant, status, created_at);
CREATE INDEX a_kw01 ON a_instances (tenant, kw01, id) WHERE kw01 IS NOT NULL;
CREATE INDEX a_kw02 ON a_instances (tenant, kw02, id) WHERE kw02 IS NOT NULL;
CREATE INDEX a_num01 ON a_instances (tenant, num01, id) WHERE num01 IS NOT NULL;
CREATE INDEX a_dt01 ON a_instances (tenant, dt01, id) WHERE dt01 IS NOT NULL;
ANALYZE a_instances;

-- Layout B: one row per attribute value, typed value columns, one index per type leading with tenant and name.
CREATE TABLE b_instances (
  id uuid PRIMARY KEY, tenant varchar(100) NOT NULL, definition_name varchar(100) NOT NULL, status varchar(16) NOT NULL,
  created_at timestamptz NOT NULL, variables_json text NOT NULL);
INSERT INTO b_instances SELECT id, tenant, definition_name, status, created_at, variables_json FROM a_instances;
CREATE INDEX b_tenant_status_created ON b_instances (tenant, status, created_at);
CREATE TABLE b_attributes (
  instance_id uuid NOT NULL, tenant varchar(100) NOT NULL, name varchar(64) NOT NULL,
  kw varchar(200), num numeric, dt timestamptz, PRIMARY KEY (instance_id, name));
INSERT INTO b_attributes
SELECT id, tenant, 'customer', kw01, NULL::numeric, NULL::timestamptz FROM a_instances UNION ALL
SELECT id, tenant, 'region', kw02, NULL::numeric, NULL::timestamptz FROM a_instances UNION ALL
SELECT id, tenant, 'amount', NULL::varchar, num01, NULL::timestamptz FROM a_instances UNION ALL
SELECT id, tenant, 'submittedAt', NULL::varchar, NULL::numeric, dt01 FROM a_instances;
CREATE INDEX b_kw ON b_attributes (tenant, name, kw, instance_id) WHERE kw IS NOT NULL;
CREATE INDEX b_num ON b_attributes (tenant, name, num, instance_id) WHERE num IS NOT NULL;
CREATE INDEX b_dt ON b_attributes (tenant, name, dt, instance_id) WHERE dt IS NOT NULL;
ANALYZE b_instances; ANALYZE b_attributes;

SELECT pg_size_pretty(pg_total_relation_size('a_instances')) AS a_total,
       pg_size_pretty(pg_total_relation_size('b_instances') + pg_total_relation_size('b_attributes')) AS b_total;

-- a) amount > 10000 and region = "EU" and status = "running", first page of 50 newest first
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
SELECT id FROM a_instances WHERE tenant = 'acme' AND num01 > 10000 AND kw02 = 'EU' AND status = 'Running'
ORDER BY created_at DESC, id LIMIT 50;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
SELECT i.id FROM b_instances i WHERE i.tenant = 'acme' AND i.status = 'Running'
  AND EXISTS (SELECT 1 FROM b_attributes x WHERE x.instance_id = i.id AND x.tenant = 'acme' AND x.name = 'amount' AND x.num > 10000)
  AND EXISTS (SELECT 1 FROM b_attributes x WHERE x.instance_id = i.id AND x.tenant = 'acme' AND x.name = 'region' AND x.kw = 'EU')
ORDER BY i.created_at DESC, i.id LIMIT 50;

-- b) customer = "C-000123"
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
SELECT id FROM a_instances WHERE tenant = 'acme' AND kw01 = 'C-000123' ORDER BY created_at DESC, id LIMIT 50;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
SELECT i.id FROM b_instances i WHERE i.tenant = 'acme'
  AND EXISTS (SELECT 1 FROM b_attributes x WHERE x.instance_id = i.id AND x.tenant = 'acme' AND x.name = 'customer' AND x.kw = 'C-000123')
ORDER BY i.created_at DESC, i.id LIMIT 50;

-- c) region in ("EU","UK") and submittedAt >= "2026-11-01T00:00:00Z", orderBy submittedAt desc, first page of 50
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
SELECT id FROM a_instances WHERE tenant = 'acme' AND kw02 IN ('EU', 'UK') AND dt01 >= '2026-11-01T00:00:00Z'
ORDER BY dt01 DESC, id LIMIT 50;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
SELECT i.id, s.dt FROM b_attributes s JOIN b_instances i ON i.id = s.instance_id
WHERE s.tenant = 'acme' AND s.name = 'submittedAt' AND s.dt >= '2026-11-01T00:00:00Z'
  AND EXISTS (SELECT 1 FROM b_attributes x WHERE x.instance_id = s.instance_id AND x.tenant = 'acme' AND x.name = 'region' AND x.kw IN ('EU', 'UK'))
ORDER BY s.dt DESC, s.instance_id LIMIT 50;

-- c, page 20: keyset after the 1,000th row (sort value, id); "dt01 <= at" alone is the index condition the seek starts from
SELECT dt01 AS at, id AS after_id FROM a_instances WHERE tenant = 'acme' AND kw02 IN ('EU', 'UK') AND dt01 >= '2026-11-01T00:00:00Z'
ORDER BY dt01 DESC, id OFFSET 999 LIMIT 1 \gset
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
SELECT id FROM a_instances WHERE tenant = 'acme' AND kw02 IN ('EU', 'UK') AND dt01 >= '2026-11-01T00:00:00Z'
  AND dt01 <= :'at' AND (dt01 < :'at' OR id > :'after_id')
ORDER BY dt01 DESC, id LIMIT 50;

-- The list's total: how many match filter a (the existing list counts every page)
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
SELECT count(*) FROM a_instances WHERE tenant = 'acme' AND num01 > 10000 AND kw02 = 'EU' AND status = 'Running';

-- Counts by value (the console's facets): region, top 10
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
SELECT kw02, count(*) FROM a_instances WHERE tenant = 'acme' AND kw02 IS NOT NULL GROUP BY kw02 ORDER BY count(*) DESC LIMIT 10;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
SELECT kw, count(*) FROM b_attributes WHERE tenant = 'acme' AND name = 'region' AND kw IS NOT NULL GROUP BY kw ORDER BY count(*) DESC LIMIT 10;

-- Write cost: one commit's update of an instance with attributes (A: same statement; B: one more statement)
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
UPDATE a_instances SET status = 'Waiting', kw01 = 'C-000124', kw02 = 'EU', num01 = 12000, dt01 = now() WHERE id = md5('500'::text)::uuid;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
INSERT INTO b_attributes VALUES (md5('500'::text)::uuid, 'acme', 'customer', 'C-000124', NULL, NULL), (md5('500'::text)::uuid, 'acme', 'region', 'EU', NULL, NULL),
  (md5('500'::text)::uuid, 'acme', 'amount', NULL, 12000, NULL), (md5('500'::text)::uuid, 'acme', 'submittedAt', NULL, NULL, now())
ON CONFLICT (instance_id, name) DO UPDATE SET kw = excluded.kw, num = excluded.num, dt = excluded.dt;
