-- Throttle keys (issue 43). A job of a task (or a job) that declares
-- `throttle` keeps it in `throttle` (JSON: the key made from its input, the
-- limit and the period). At most `limit` of a key's jobs start in any
-- period: `throttle_keys` holds a row a key with its slots (each slot's
-- last start and when it is next free, `store/throttle.rs`). A job that
-- must wait is parked until its turn (its `run_at`) holding a slot, in
-- `throttle_slot`; a claim clears it when the job starts. A key's row goes
-- once it holds nothing (`held_until` has passed).
ALTER TABLE jobs ADD COLUMN throttle TEXT;
ALTER TABLE jobs ADD COLUMN throttle_slot INTEGER;
CREATE TABLE throttle_keys (
    tenant TEXT NOT NULL,
    key TEXT NOT NULL,
    slots TEXT NOT NULL,
    held_until BIGINT NOT NULL,
    PRIMARY KEY (tenant, key)
);
CREATE INDEX throttle_keys_held ON throttle_keys (held_until);
-- Whether a tenant has throttled jobs in line: a claim of its jobs then
-- takes the general path, which decides them.
CREATE INDEX jobs_queued_throttle ON jobs (tenant)
    WHERE status = 'queued' AND throttle IS NOT NULL;
