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

-- Concurrency keys with a limit: at most `concurrency_limit` (NULL: 1) jobs
-- of a key run at once, each in its own slot, which the unique index holds.
ALTER TABLE jobs ADD COLUMN concurrency_limit INTEGER;
ALTER TABLE jobs ADD COLUMN concurrency_slot INTEGER;
UPDATE jobs SET concurrency_slot = 0 WHERE status = 'running' AND concurrency_key IS NOT NULL;
DROP INDEX jobs_running_key;
CREATE UNIQUE INDEX jobs_running_key ON jobs (tenant, concurrency_key, concurrency_slot)
    WHERE status = 'running' AND concurrency_key IS NOT NULL;
