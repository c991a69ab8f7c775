-- Cron schedules: each row is a tenant's schedule, its definition (`spec`,
-- JSON) and where its firing stands. The leader fires a schedule when
-- `due_at` has passed: its next slot (`next_at`), or at once while a
-- `before` job (`pending`) or a buffered slot waits to be decided. Every
-- change is made against `rev`, so two writers (two leaders across a
-- stall, a PUT beside a firing) cannot both move a schedule on.
CREATE TABLE schedules (
    tenant text NOT NULL,
    name text NOT NULL,
    spec text NOT NULL,
    enabled boolean NOT NULL,
    due_at bigint,
    next_at bigint,
    last_slot bigint,
    last_job text,
    pending text,
    pending_slot bigint,
    buffered bigint,
    fired bigint NOT NULL DEFAULT 0,
    skipped bigint NOT NULL DEFAULT 0,
    last_error text,
    rev bigint NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (tenant, name)
);
CREATE INDEX schedules_due ON schedules (due_at) WHERE due_at IS NOT NULL;
