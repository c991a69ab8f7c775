-- A job's stages as rows: a workflow's steps, each step's fallback, and
-- its on_error and on_cancel chains, each pinned to its task's version
-- when the job was enqueued, with its own status, attempts, output and
-- error. The stage running now is also in the job's fallback_* columns,
-- which is what a claim reads.
ALTER TABLE jobs ADD COLUMN workflow text;
ALTER TABLE jobs ADD COLUMN workflow_version integer;

CREATE TABLE job_steps (
    job_id       text NOT NULL,
    seq          integer NOT NULL,
    kind         text NOT NULL,
    name         text NOT NULL,
    task         text NOT NULL,
    task_version integer NOT NULL,
    digest       text NOT NULL,
    max_attempts integer NOT NULL,
    config       text NOT NULL,
    status       text NOT NULL,
    attempts     integer NOT NULL DEFAULT 0,
    output       text,
    error        text,
    started_at   bigint,
    finished_at  bigint,
    PRIMARY KEY (job_id, seq)
);
