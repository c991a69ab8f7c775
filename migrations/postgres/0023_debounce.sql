-- Debounce keys (issue 43). A job of a task (or a job) that declares
-- `debounce` keeps the key made from its input in `debounce_key` and, in
-- `debounce` (JSON, `store/debounce.rs`), its period and wait, the first
-- enqueue of its chain, the job it replaced and, once replaced, its
-- successor. An enqueue finds its key's pending job (queued, never
-- started) by `jobs_debounce` and cancels it.
ALTER TABLE jobs ADD COLUMN debounce_key TEXT;
ALTER TABLE jobs ADD COLUMN debounce TEXT;
CREATE INDEX jobs_debounce ON jobs (tenant, debounce_key)
    WHERE status = 'queued' AND debounce_key IS NOT NULL;
