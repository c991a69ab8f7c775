-- A job's row is written four times (insert, claim, begin mark, end). Only
-- the begin mark leaves every indexed column as it was, so only it can be a
-- heap-only update, and only when the page that holds the row has room for
-- the new version. Pages filled to the brim by inserts had none: each begin
-- mark wrote a new entry into every index the running row is in (4.9 WAL
-- records and 632 bytes a job, against 1.2 and 105 with half of each page
-- left free; scripts/write-budget). The claim's and the end's new versions
-- land on the same page too, so they no longer move the row across pages.
ALTER TABLE jobs SET (fillfactor = 50);
