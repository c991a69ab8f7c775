-- Canary rollouts (issue 42). A version defined with `rollout` is staged:
-- while `rollout_percent` is set, that share of new jobs (by a hash of
-- the job's id) pins it and the rest pin the task's live version, the
-- newest that is neither staged nor rolled back. Promote clears the
-- percent (the version goes live); rollback clears it and sets
-- `rolled_back_at` (jobs already pinned to it still run it).
-- `rollout_started_at` stays, so a version shows when its rollout began.
ALTER TABLE tasks ADD COLUMN rollout_percent INTEGER;
ALTER TABLE tasks ADD COLUMN rollout_started_at BIGINT;
ALTER TABLE tasks ADD COLUMN rolled_back_at BIGINT;
