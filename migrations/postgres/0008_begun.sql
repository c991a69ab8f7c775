-- Whether a running job's attempt has begun: its runner was about to start
-- its guest. A claim ahead of the runner's free slots takes a job unbegun,
-- and the runner marks it begun just before it starts it; a rescued job
-- that never began goes back to the queue without spending an attempt.
-- Jobs running when this is added count as begun, as they did before.
ALTER TABLE jobs ADD COLUMN begun boolean NOT NULL DEFAULT true;
