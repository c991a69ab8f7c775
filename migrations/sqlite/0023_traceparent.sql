-- The trace a job continues (a client's `traceparent`, or the attempt of
-- the job that made it), as the job's own context: the span of its enqueue
-- in that trace. Null for a job with a trace of its own, whose id makes it.
ALTER TABLE jobs ADD COLUMN traceparent TEXT;
