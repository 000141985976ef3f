\set r random(1, 20001)
BEGIN;
SELECT gen_random_uuid() AS u \gset
INSERT INTO wf_instances VALUES (:u, 'default', 'signal-roundtrip', 1, 'Waiting', now(), now(), NULL, 1, '{}', '{"n":1,"region":"EU","amount":123,"submittedAt":"2026-01-01T00:00:01.000Z"}', NULL, NULL, NULL, 2, 'EU', :r, now());
COMMIT;
UPDATE wf_instances SET status='Completed', updated_at=now(), completed_at=now(), version=2, variables='{"go":{"value":1},"result":{"value":1}}', history_length=5 WHERE id=:u AND version=1;
