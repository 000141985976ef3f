CREATE TABLE "wf_definitions" (
    "tenant" TEXT NOT NULL DEFAULT '',
    "name" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "json" TEXT NOT NULL,
    "description" TEXT NULL,
    "created_at" TEXT NOT NULL,
    CONSTRAINT "pk_wf_definitions" PRIMARY KEY ("tenant", "name", "version")
);


CREATE TABLE "wf_history" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_wf_history" PRIMARY KEY AUTOINCREMENT,
    "instance_id" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "at" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "step_id" TEXT NULL,
    "data_json" TEXT NULL,
    "actor" TEXT NULL
);


CREATE TABLE "wf_instances" (
    "id" TEXT NOT NULL CONSTRAINT "pk_wf_instances" PRIMARY KEY,
    "tenant" TEXT NOT NULL DEFAULT '',
    "definition_name" TEXT NOT NULL,
    "definition_version" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "business_key" TEXT NULL,
    "started_by" TEXT NULL,
    "idempotency_key" TEXT NULL,
    "input_json" TEXT NULL,
    "variables_json" TEXT NOT NULL,
    "output_json" TEXT NULL,
    "error" TEXT NULL,
    "wait_kind" TEXT NULL,
    "wait_step_id" TEXT NULL,
    "wait_signal" TEXT NULL,
    "wait_timer_id" TEXT NULL,
    "wait_task_id" TEXT NULL,
    "parent_instance_id" TEXT NULL,
    "parent_wait_id" TEXT NULL,
    "branches_json" TEXT NULL,
    "parked_signals" INTEGER NOT NULL,
    "version" INTEGER NOT NULL,
    "history_length" INTEGER NOT NULL,
    "created_at" TEXT NOT NULL,
    "updated_at" TEXT NOT NULL,
    "completed_at" TEXT NULL
);


CREATE TABLE "wf_schema" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_wf_schema" PRIMARY KEY,
    "version" INTEGER NOT NULL,
    "applied_at" TEXT NOT NULL
);


CREATE TABLE "wf_signals" (
    "id" TEXT NOT NULL CONSTRAINT "pk_wf_signals" PRIMARY KEY,
    "instance_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "payload_json" TEXT NULL,
    "status" TEXT NOT NULL,
    "due_at_ms" INTEGER NOT NULL,
    "attempts" INTEGER NOT NULL,
    "lease_owner" TEXT NULL,
    "lease_token" INTEGER NOT NULL,
    "lease_until_ms" INTEGER NULL,
    "last_error" TEXT NULL,
    "idempotency_key" TEXT NULL,
    "actor" TEXT NULL,
    "task_id" TEXT NULL,
    "created_at" TEXT NOT NULL,
    "handled_at" TEXT NULL,
    "trace_parent" TEXT NULL
);


CREATE TABLE "wf_tasks" (
    "id" TEXT NOT NULL CONSTRAINT "pk_wf_tasks" PRIMARY KEY,
    "instance_id" TEXT NOT NULL,
    "tenant" TEXT NOT NULL DEFAULT '',
    "definition_name" TEXT NOT NULL,
    "step_id" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "assignee" TEXT NULL,
    "role" TEXT NULL,
    "status" TEXT NOT NULL,
    "claimed_by" TEXT NULL,
    "data_json" TEXT NULL,
    "result_json" TEXT NULL,
    "created_at" TEXT NOT NULL,
    "completed_at" TEXT NULL
);


CREATE UNIQUE INDEX "ix_wf_history_instance_id_sequence" ON "wf_history" ("instance_id", "sequence");


CREATE UNIQUE INDEX "ix_wf_instances_tenant_definition_name_business_key" ON "wf_instances" ("tenant", "definition_name", "business_key") WHERE business_key IS NOT NULL;


CREATE INDEX "ix_wf_instances_tenant_definition_name_created_at" ON "wf_instances" ("tenant", "definition_name", "created_at");


CREATE UNIQUE INDEX "ix_wf_instances_tenant_idempotency_key" ON "wf_instances" ("tenant", "idempotency_key") WHERE idempotency_key IS NOT NULL;


CREATE INDEX "ix_wf_instances_tenant_status_created_at" ON "wf_instances" ("tenant", "status", "created_at");


CREATE UNIQUE INDEX "ix_wf_signals_instance_id_idempotency_key" ON "wf_signals" ("instance_id", "idempotency_key") WHERE idempotency_key IS NOT NULL;


CREATE INDEX "ix_wf_signals_instance_id_status" ON "wf_signals" ("instance_id", "status");


CREATE INDEX "ix_wf_signals_lease_owner" ON "wf_signals" ("lease_owner") WHERE lease_owner IS NOT NULL;


CREATE INDEX "ix_wf_signals_status_due_at_ms" ON "wf_signals" ("status", "due_at_ms");


CREATE INDEX "ix_wf_tasks_instance_id" ON "wf_tasks" ("instance_id");


CREATE INDEX "ix_wf_tasks_tenant_status_assignee" ON "wf_tasks" ("tenant", "status", "assignee");


CREATE INDEX "ix_wf_tasks_tenant_status_role" ON "wf_tasks" ("tenant", "status", "role");


