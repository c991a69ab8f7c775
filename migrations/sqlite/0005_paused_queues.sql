-- Paused queues: a paused queue's jobs are not claimed; enqueue still works.
CREATE TABLE paused_queues (
    tenant    TEXT NOT NULL,
    queue     TEXT NOT NULL,
    paused_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, queue)
) WITHOUT ROWID;
-- A queued job of a paused queue is parked with `available = 2`: out of
-- both claim indexes (`jobs_available` is `available = 1`, `jobs_scheduled`
-- is `available = 0`), so that claims never read it. Resume finds them here.
CREATE INDEX jobs_parked ON jobs (tenant, queue) WHERE status = 'queued' AND available = 2;

-- Schedule-to-start timeout: a job still queued `expire_after_ms` after it
-- came due fails with kind `expired`. Only jobs that have one pay for the index.
ALTER TABLE jobs ADD COLUMN expire_after_ms INTEGER;
CREATE INDEX jobs_expiry ON jobs ((run_at + expire_after_ms))
    WHERE status = 'queued' AND expire_after_ms IS NOT NULL;
