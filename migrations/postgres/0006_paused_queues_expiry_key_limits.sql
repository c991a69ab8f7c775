-- Paused queues: a paused queue's jobs are not claimed; enqueue still works.
CREATE TABLE paused_queues (
    tenant    TEXT NOT NULL,
    queue     TEXT NOT NULL,
    paused_at BIGINT NOT NULL,
    PRIMARY KEY (tenant, queue)
);
-- A queued job of a paused queue is parked (`paused`): out of the claim's
-- index and of `jobs_due`, so that claims never read it. Resume finds them
-- through `jobs_parked`.
ALTER TABLE jobs ADD COLUMN paused BOOLEAN NOT NULL DEFAULT FALSE;
DROP INDEX jobs_claim;
CREATE INDEX jobs_claim ON jobs (tenant, urgent DESC, priority, run_at, id)
    WHERE status = 'queued' AND NOT paused;
DROP INDEX jobs_due;
CREATE INDEX jobs_due ON jobs (run_at)
    WHERE status = 'queued' AND run_at > created_at AND NOT paused;
CREATE INDEX jobs_parked ON jobs (tenant, queue) WHERE status = 'queued' AND paused;

-- Schedule-to-start timeout: a job still queued `expire_after_ms` after it
-- came due fails with kind `expired`. Only jobs that have one pay for the index.
ALTER TABLE jobs ADD COLUMN expire_after_ms BIGINT;
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
