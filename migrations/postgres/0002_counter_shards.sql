-- Each tenant's counters split into shards. A counter row stays locked
-- from a transaction's update until its commit (and a commit waits for
-- its WAL flush), so with one row per tenant every enqueue, claim and end
-- of one tenant queued behind the others. Each connection now adds to the
-- shard of its backend's pid, so one transaction touches one shard, in
-- tenant order, and transactions on other connections rarely meet; readers
-- sum the shards.
ALTER TABLE tenant_jobs ADD COLUMN shard SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE tenant_jobs DROP CONSTRAINT tenant_jobs_pkey;
ALTER TABLE tenant_jobs ADD PRIMARY KEY (tenant, shard);

ALTER TABLE tenant_usage ADD COLUMN shard SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE tenant_usage DROP CONSTRAINT tenant_usage_pkey;
ALTER TABLE tenant_usage ADD PRIMARY KEY (tenant, window_start, shard);
