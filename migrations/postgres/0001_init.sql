-- The queue's schema on PostgreSQL: the same logical schema as SQLite's
-- (migrations/sqlite), in one step. Times are Unix milliseconds (BIGINT),
-- taken from the database's clock; JSON values are kept as their text.

CREATE TABLE tenants (
    name        TEXT PRIMARY KEY,
    created_at  BIGINT NOT NULL,
    -- The admin's settings; NULL means the server's default.
    weight      INTEGER,
    -- JSON: the quotas the admin set (the others are the server's defaults).
    quotas      TEXT
);

-- Tokens are kept only as the SHA-256 of their text.
CREATE TABLE tokens (
    hash        TEXT PRIMARY KEY,
    tenant      TEXT REFERENCES tenants (name),
    scopes      TEXT NOT NULL,
    admin       BOOLEAN NOT NULL DEFAULT FALSE,
    created_at  BIGINT NOT NULL
);

-- Component bytes, once per digest whichever tenants uploaded them; workers
-- on other machines fetch them from here by digest.
CREATE TABLE blobs (
    digest      TEXT PRIMARY KEY,
    bytes       BYTEA NOT NULL
);

-- Which tenant may use which component.
CREATE TABLE components (
    tenant      TEXT NOT NULL REFERENCES tenants (name),
    digest      TEXT NOT NULL REFERENCES blobs (digest),
    size        BIGINT NOT NULL,
    abi         TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (tenant, digest)
);

CREATE TABLE tasks (
    tenant      TEXT NOT NULL REFERENCES tenants (name),
    name        TEXT NOT NULL,
    version     INTEGER NOT NULL,
    digest      TEXT NOT NULL,
    spec        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (tenant, name, version)
);

CREATE TABLE jobs (
    id                  TEXT PRIMARY KEY,
    tenant              TEXT NOT NULL,
    task                TEXT NOT NULL,
    task_version        INTEGER NOT NULL,
    digest              TEXT NOT NULL,
    status              TEXT NOT NULL,
    queue               TEXT NOT NULL,
    priority            INTEGER NOT NULL,
    input               TEXT NOT NULL,
    output              TEXT,
    error               TEXT,
    attempts            INTEGER NOT NULL DEFAULT 0,
    max_attempts        INTEGER NOT NULL,
    run_at              BIGINT NOT NULL,
    created_at          BIGINT NOT NULL,
    started_at          BIGINT,
    finished_at         BIGINT,
    deadline_at         BIGINT,
    concurrency_key     TEXT,
    unique_key          TEXT,
    idempotency_key     TEXT,
    idempotency_hash    TEXT,
    lease_owner         TEXT,
    lease_token         TEXT,
    lease_expires_at    BIGINT,
    attempt_started_at  BIGINT,
    cancel_requested    BOOLEAN NOT NULL DEFAULT FALSE,
    progress            TEXT,
    waiting_for         TEXT,
    -- The fallback task serving the job once its own task failed for good.
    fallback_task       TEXT,
    fallback_version    INTEGER,
    fallback_digest     TEXT,
    fallback_input      TEXT,
    fallback_depth      INTEGER NOT NULL DEFAULT 0,
    -- Attempts made before the task now running took over.
    stage_offset        INTEGER NOT NULL DEFAULT 0,
    -- Asked to run now: first in its tenant's line.
    urgent              BOOLEAN NOT NULL DEFAULT FALSE,
    -- Snoozes so far (capped per job).
    snoozes             INTEGER NOT NULL DEFAULT 0
);

-- The claim order within a tenant; claims take tenants in turn.
CREATE INDEX jobs_claim ON jobs (tenant, urgent DESC, priority, run_at, id)
    WHERE status = 'queued';
-- When the next queued job comes due.
CREATE INDEX jobs_due ON jobs (run_at) WHERE status = 'queued';
-- Listing, newest first.
CREATE INDEX jobs_by_tenant ON jobs (tenant, id);
-- Rescue of expired leases.
CREATE INDEX jobs_leases ON jobs (lease_expires_at) WHERE status = 'running';
-- Two jobs with one concurrency key never run at once (DESIGN invariant 6).
CREATE UNIQUE INDEX jobs_running_key ON jobs (tenant, concurrency_key)
    WHERE status = 'running' AND concurrency_key IS NOT NULL;
CREATE INDEX jobs_queued_key ON jobs (tenant, concurrency_key)
    WHERE status IN ('queued', 'waiting') AND concurrency_key IS NOT NULL;
CREATE UNIQUE INDEX jobs_unique_key ON jobs (tenant, unique_key)
    WHERE unique_key IS NOT NULL AND status IN ('queued', 'running', 'waiting');
CREATE UNIQUE INDEX jobs_idempotency ON jobs (tenant, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

CREATE TABLE attempts (
    job_id              TEXT NOT NULL,
    attempt             INTEGER NOT NULL,
    task                TEXT NOT NULL,
    task_version        INTEGER NOT NULL,
    digest              TEXT NOT NULL,
    started_at          BIGINT NOT NULL,
    finished_at         BIGINT NOT NULL,
    outcome             TEXT NOT NULL,
    error               TEXT,
    fuel_used           BIGINT NOT NULL,
    peak_memory_bytes   BIGINT NOT NULL,
    log                 TEXT,
    PRIMARY KEY (job_id, attempt)
);

-- What each tenant used, per minute window (window_start: Unix ms).
CREATE TABLE tenant_usage (
    tenant          TEXT NOT NULL,
    window_start    BIGINT NOT NULL,
    fuel            BIGINT NOT NULL DEFAULT 0,
    wall_ms         BIGINT NOT NULL DEFAULT 0,
    attempts        BIGINT NOT NULL DEFAULT 0,
    completed       BIGINT NOT NULL DEFAULT 0,
    failed          BIGINT NOT NULL DEFAULT 0,
    cancelled       BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, window_start)
);

-- How many of each tenant's jobs are in each unfinished state, kept in the
-- same transaction as every change of status, so that quota checks cost
-- one lookup. Rows are updated in tenant order, so that two transactions
-- never wait for each other's rows in a cycle.
CREATE TABLE tenant_jobs (
    tenant      TEXT PRIMARY KEY,
    queued      BIGINT NOT NULL DEFAULT 0,
    running     BIGINT NOT NULL DEFAULT 0,
    waiting     BIGINT NOT NULL DEFAULT 0
);
