CREATE EXTENSION IF NOT EXISTS pgcrypto;
CREATE TABLE wf_instances (id uuid primary key, tenant varchar(100) not null, definition_name varchar(200) not null, definition_version int not null,
 status varchar(32) not null, created_at timestamptz not null, updated_at timestamptz not null, completed_at timestamptz, version int not null,
 variables text, input text, business_key varchar(200), idempotency_key varchar(200), parent_instance_id uuid, history_length int not null);
CREATE INDEX ix_tdc ON wf_instances (tenant, definition_name, created_at);
CREATE UNIQUE INDEX ix_idem ON wf_instances (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX ix_tsc ON wf_instances (tenant, status, created_at);
CREATE INDEX ix_comp ON wf_instances (completed_at) WHERE completed_at IS NOT NULL;
CREATE INDEX ix_parent ON wf_instances (parent_instance_id) WHERE parent_instance_id IS NOT NULL;
CREATE UNIQUE INDEX ix_obk ON wf_instances (tenant, definition_name, business_key) WHERE business_key IS NOT NULL AND completed_at IS NULL;
CREATE INDEX ix_bk ON wf_instances (tenant, definition_name, business_key, created_at) WHERE business_key IS NOT NULL;
