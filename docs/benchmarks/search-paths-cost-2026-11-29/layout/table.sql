CREATE TABLE wf_search (id uuid primary key, tenant varchar(100) not null, kw01 varchar(256), num01 double precision, dt01 timestamptz);
CREATE INDEX ix_kw01 ON wf_search (tenant, kw01, id) WHERE kw01 IS NOT NULL;
CREATE INDEX ix_num01 ON wf_search (tenant, num01, id) WHERE num01 IS NOT NULL;
CREATE INDEX ix_dt01 ON wf_search (tenant, dt01, id) WHERE dt01 IS NOT NULL;
