-- A callback (a task's on_success or on_fail) is recorded as one of its
-- maker's calls (kind 'callback', the callback job's id as the result):
-- what lets a job's page name its callbacks, and a callback its maker.
CREATE INDEX job_calls_callback ON job_calls (result) WHERE kind = 'callback';
