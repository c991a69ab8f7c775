-- The queue's schema. Times are Unix milliseconds; JSON values are kept as text.

CREATE TABLE tenants (
    name        TEXT PRIMARY KEY,
    created_at  INTEGER NOT NULL
) WITHOUT ROWID;

-- Tokens are kept only as the SHA-256 of their text.
CREATE TABLE tokens (
    hash        TEXT PRIMARY KEY,
    tenant      TEXT REFERENCES tenants (name),
    scopes      TEXT NOT NULL,
    admin       INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL
) WITHOUT ROWID;

-- Component bytes, once per digest whichever tenants uploaded them.
CREATE TABLE blobs (
    digest      TEXT PRIMARY KEY,
    bytes       BLOB NOT NULL
);

-- Which tenant may use which component.
CREATE TABLE components (
    tenant      TEXT NOT NULL REFERENCES tenants (name),
    digest      TEXT NOT NULL REFERENCES blobs (digest),
    size        INTEGER NOT NULL,
    abi         TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (tenant, digest)
) WITHOUT ROWID;

CREATE TABLE tasks (
    tenant      TEXT NOT NULL REFERENCES tenants (name),
    name        TEXT NOT NULL,
    version     INTEGER NOT NULL,
    digest      TEXT NOT NULL,
    spec        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (tenant, name, version)
) WITHOUT ROWID;

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
    run_at              INTEGER NOT NULL,
    created_at          INTEGER NOT NULL,
    started_at          INTEGER,
    finished_at         INTEGER,
    deadline_at         INTEGER,
    concurrency_key     TEXT,
    unique_key          TEXT,
    idempotency_key     TEXT,
    idempotency_hash    TEXT,
    lease_owner         TEXT,
    lease_token         TEXT,
    lease_expires_at    INTEGER,
    attempt_started_at  INTEGER,
    cancel_requested    INTEGER NOT NULL DEFAULT 0,
    progress            TEXT,
    waiting_for         TEXT,
    -- The fallback task serving the job once its own task failed for good.
    fallback_task       TEXT,
    fallback_version    INTEGER,
    fallback_digest     TEXT,
    fallback_input      TEXT,
    fallback_depth      INTEGER NOT NULL DEFAULT 0,
    -- Attempts made before the task now running took over.
    stage_offset        INTEGER NOT NULL DEFAULT 0
);

-- The claim order.
CREATE INDEX jobs_ready ON jobs (priority, run_at, id) WHERE status = 'queued';
-- When the next queued job is due.
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
    started_at          INTEGER NOT NULL,
    finished_at         INTEGER NOT NULL,
    outcome             TEXT NOT NULL,
    error               TEXT,
    fuel_used           INTEGER NOT NULL,
    peak_memory_bytes   INTEGER NOT NULL,
    log                 TEXT,
    PRIMARY KEY (job_id, attempt)
) WITHOUT ROWID;
