-- A deterministic task's result cache (issue 42). `cache_key` is the sha256
-- of the job's pinned digest and its canonical input, set at insert for a
-- task that declares `cache`; a later job of the tenant with the same key
-- completes at once with the output of the newest completed one inside the
-- task's TTL, and names it in `cached_from` (a hit is never a source: the
-- TTL runs from a real run). `cached_fuel` is the fuel the source burned,
-- what the hit saved.
ALTER TABLE jobs ADD COLUMN cache_key TEXT;
ALTER TABLE jobs ADD COLUMN cached_from TEXT;
ALTER TABLE jobs ADD COLUMN cached_fuel BIGINT;
CREATE INDEX jobs_cache ON jobs (tenant, cache_key, finished_at) WHERE cache_key IS NOT NULL;
ALTER TABLE tenant_usage ADD COLUMN cache_hits int8 NOT NULL DEFAULT 0;
ALTER TABLE tenant_usage ADD COLUMN fuel_saved int8 NOT NULL DEFAULT 0;
