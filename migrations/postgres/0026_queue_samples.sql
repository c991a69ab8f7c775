-- What the sampler saw of each queue (issue 44): a row a queue a minute,
-- for the dashboard's queue depth and oldest wait, which no record keeps.
-- `at` is the minute's start; a later sample in the same minute replaces
-- the earlier. `depth` counts the queue's jobs due and not started,
-- `oldest_wait_ms` how long the oldest of them had waited. Rows older than
-- a day and an hour are deleted as samples are taken.
CREATE TABLE queue_samples (
    at BIGINT NOT NULL,
    tenant TEXT NOT NULL,
    queue TEXT NOT NULL,
    depth BIGINT NOT NULL,
    oldest_wait_ms BIGINT NOT NULL,
    PRIMARY KEY (at, tenant, queue)
);
