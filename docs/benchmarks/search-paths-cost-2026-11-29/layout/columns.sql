ALTER TABLE wf_instances ADD kw01 varchar(256), ADD num01 double precision, ADD dt01 timestamptz;
CREATE INDEX ix_kw01 ON wf_instances (tenant, kw01, id) WHERE kw01 IS NOT NULL;
CREATE INDEX ix_num01 ON wf_instances (tenant, num01, id) WHERE num01 IS NOT NULL;
CREATE INDEX ix_dt01 ON wf_instances (tenant, dt01, id) WHERE dt01 IS NOT NULL;
