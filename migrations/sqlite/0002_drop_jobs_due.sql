-- Every claim paid for this index (a delete per job); the next due time is
-- found on jobs_ready instead, one index seek per distinct priority.
DROP INDEX jobs_due;
