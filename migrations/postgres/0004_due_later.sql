-- `jobs_due` answers "when does the next job come due" for an idle
-- claimer. A job due when it is enqueued (most of them) needs no entry:
-- its enqueue wakes the claimers. Only jobs scheduled for later (a delay,
-- a retry's backoff, a snooze, a resume) are kept, which spares most jobs
-- one index entry at insert.
DROP INDEX jobs_due;
CREATE INDEX jobs_due ON jobs (run_at) WHERE status = 'queued' AND run_at > created_at;
