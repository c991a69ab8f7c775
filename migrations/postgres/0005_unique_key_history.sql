-- A unique key's finished jobs, for the reuse rules (allow_failed_only,
-- reject); only jobs that have a key pay for it.
CREATE INDEX jobs_unique_key_any ON jobs (tenant, unique_key) WHERE unique_key IS NOT NULL;
