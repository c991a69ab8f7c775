-- Hostile tenants: fair claiming by tenant, quotas, fuel budgets and usage.

-- The admin's settings of each tenant; NULL means the server's default.
ALTER TABLE tenants ADD COLUMN weight INTEGER;
-- JSON: the quotas the admin set (the others are the server's defaults).
ALTER TABLE tenants ADD COLUMN quotas TEXT;

-- How many of each tenant's jobs are in each unfinished state, kept by the
-- writer in the same transaction as every change of status, so that quota
-- checks cost one lookup.
CREATE TABLE tenant_jobs (
    tenant      TEXT PRIMARY KEY,
    queued      INTEGER NOT NULL DEFAULT 0,
    running     INTEGER NOT NULL DEFAULT 0,
    waiting     INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
INSERT INTO tenant_jobs (tenant, queued, running, waiting)
    SELECT tenant, SUM(status = 'queued'), SUM(status = 'running'), SUM(status = 'waiting')
    FROM jobs GROUP BY tenant;

-- What each tenant used, per minute window (window_start: Unix ms).
CREATE TABLE tenant_usage (
    tenant          TEXT NOT NULL,
    window_start    INTEGER NOT NULL,
    fuel            INTEGER NOT NULL DEFAULT 0,
    wall_ms         INTEGER NOT NULL DEFAULT 0,
    attempts        INTEGER NOT NULL DEFAULT 0,
    completed       INTEGER NOT NULL DEFAULT 0,
    failed          INTEGER NOT NULL DEFAULT 0,
    cancelled       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, window_start)
) WITHOUT ROWID;

-- A queued job is available (due: claims look only at these) or scheduled
-- for a later run_at; claims move scheduled jobs that came due to
-- available a bounded number at a time, so that a backlog of future jobs
-- never lengthens a claim.
ALTER TABLE jobs ADD COLUMN available INTEGER NOT NULL DEFAULT 0;
-- Asked to run now: first in its tenant's line.
ALTER TABLE jobs ADD COLUMN urgent INTEGER NOT NULL DEFAULT 0;
-- Snoozes so far (capped per job).
ALTER TABLE jobs ADD COLUMN snoozes INTEGER NOT NULL DEFAULT 0;

DROP INDEX jobs_ready;
-- The claim order within a tenant; claims take tenants in turn.
CREATE INDEX jobs_available ON jobs (tenant, urgent DESC, priority, run_at, id)
    WHERE status = 'queued' AND available = 1;
-- When the next scheduled job comes due, and which come due first.
CREATE INDEX jobs_scheduled ON jobs (run_at) WHERE status = 'queued' AND available = 0;
