-- How many callbacks deep a job is: 0 for one a client, a schedule or a
-- workflow made; its parent's and one more for a task's on_success or
-- on_fail job. A callback past the most is not made, so no loop of
-- callbacks (two definitions made at once can close one) runs for ever.
ALTER TABLE jobs ADD COLUMN callback_depth INTEGER NOT NULL DEFAULT 0;
