-- What a job's orchestration calls did, keyed by their place in the job's
-- order of calls ("3", or "3/1" for a call made by the sub-task of call 3):
-- an `invoke`'s output, a `spawn`'s child job. A retried job that makes the
-- same call at the same place gets the recorded result instead of running
-- it again; a job's children are its `spawn` rows.
CREATE TABLE job_calls (
    job_id     TEXT NOT NULL,
    call       TEXT NOT NULL,
    kind       TEXT NOT NULL,
    task       TEXT NOT NULL,
    result     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (job_id, call)
);

-- A child's parent.
CREATE INDEX job_calls_child ON job_calls (result) WHERE kind = 'spawn';
