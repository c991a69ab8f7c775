-- Fairness keys (issue 43). A job's `fairness_key` (its own, or else its
-- concurrency key) and `fairness_weight` (1 when NULL) share its tenant's
-- claims among the tenant's keys by the runner time their attempts take,
-- as claims share the runners among tenants. A claim finds a tenant's
-- keys with work by a skip scan of `jobs_fair`, and reads each key's jobs
-- in the tenant's order from it. Jobs without a key (neither a fairness
-- key nor a concurrency key) are not in it.
ALTER TABLE jobs ADD COLUMN fairness_key TEXT;
ALTER TABLE jobs ADD COLUMN fairness_weight INTEGER;
CREATE INDEX jobs_fair
    ON jobs (tenant, coalesce(fairness_key, concurrency_key), urgent DESC, priority, run_at, id)
    WHERE status = 'queued' AND available = 1 AND coalesce(fairness_key, concurrency_key) IS NOT NULL;
