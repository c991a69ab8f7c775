-- Named leases: work that must run in one process at a time (cron slots,
-- maintenance) is done by the holder of its lease. A holder renews before
-- `expires_at`; once that has passed, another may take it, and the term
-- goes up, so a holder that lost it can tell.
CREATE TABLE leases (
    name text PRIMARY KEY,
    holder text NOT NULL,
    term bigint NOT NULL,
    taken_at bigint NOT NULL,
    expires_at bigint NOT NULL
);
