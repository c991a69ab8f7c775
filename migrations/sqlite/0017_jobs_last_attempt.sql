-- The attempt that ended a job (completed, failed or cancelled it) rides on
-- the end's write of the job's row instead of a row of its own in
-- `attempts`: one row written fewer in every job's life, the most common
-- one (DESIGN 5.1). Attempts that leave the job to run again (a retry, a
-- snooze, a fallback's or a step's turn) are rows of `attempts` as before;
-- a redrive moves the row's attempt there before the job runs again. A job's
-- attempts are the rows of `attempts` and this one (`job_sql::ATTEMPTS_PAGE`);
-- `last_attempt` is NULL while the row holds none.
ALTER TABLE jobs ADD COLUMN last_attempt INTEGER;
ALTER TABLE jobs ADD COLUMN last_task TEXT;
ALTER TABLE jobs ADD COLUMN last_task_version INTEGER;
ALTER TABLE jobs ADD COLUMN last_digest TEXT;
ALTER TABLE jobs ADD COLUMN last_started_at INTEGER;
ALTER TABLE jobs ADD COLUMN last_finished_at INTEGER;
ALTER TABLE jobs ADD COLUMN last_outcome TEXT;
ALTER TABLE jobs ADD COLUMN last_error TEXT;
ALTER TABLE jobs ADD COLUMN last_fuel_used INTEGER;
ALTER TABLE jobs ADD COLUMN last_peak_memory_bytes INTEGER;
ALTER TABLE jobs ADD COLUMN last_log TEXT;
ALTER TABLE jobs ADD COLUMN last_network TEXT;
