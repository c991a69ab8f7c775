-- Cron schedules: each row is a tenant's schedule, its definition (`spec`,
-- JSON) and where its firing stands. The leader fires a schedule when
-- `due_at` has passed: its next slot (`next_at`), or at once while a
-- `before` job (`pending`) or a buffered slot waits to be decided. Every
-- change is made against `rev`, so two writers (two leaders across a
-- stall, a PUT beside a firing) cannot both move a schedule on.
CREATE TABLE schedules (
    tenant TEXT NOT NULL,
    name TEXT NOT NULL,
    spec TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    due_at INTEGER,
    next_at INTEGER,
    last_slot INTEGER,
    last_job TEXT,
    pending TEXT,
    pending_slot INTEGER,
    buffered INTEGER,
    fired INTEGER NOT NULL DEFAULT 0,
    skipped INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    rev INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, name)
) WITHOUT ROWID;
CREATE INDEX schedules_due ON schedules (due_at) WHERE due_at IS NOT NULL;
