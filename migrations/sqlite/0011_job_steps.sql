-- A job's stages as rows: a workflow's steps, each step's fallback, and
-- its on_error and on_cancel chains, each pinned to its task's version
-- when the job was enqueued, with its own status, attempts, output and
-- error. The stage running now is also in the job's fallback_* columns,
-- which is what a claim reads.
ALTER TABLE jobs ADD COLUMN workflow TEXT;
ALTER TABLE jobs ADD COLUMN workflow_version INTEGER;

CREATE TABLE job_steps (
    job_id       TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    kind         TEXT NOT NULL,
    name         TEXT NOT NULL,
    task         TEXT NOT NULL,
    task_version INTEGER NOT NULL,
    digest       TEXT NOT NULL,
    max_attempts INTEGER NOT NULL,
    config       TEXT NOT NULL,
    status       TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    output       TEXT,
    error        TEXT,
    started_at   INTEGER,
    finished_at  INTEGER,
    PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;
