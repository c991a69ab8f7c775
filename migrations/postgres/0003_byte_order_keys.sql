-- The queue's text keys compare as bytes (COLLATE "C"), as SQLite's and
-- Rust's do. Under a database's linguistic collation every comparison in
-- their indexes went through strcoll (5 % of the server's CPU in a
-- burn-down), and `tenant > $1` (the claims' turn among tenants) could
-- order names otherwise than the Rust code that keeps the cursor. Ids,
-- tenant names and keys are compared for equality and order only, never
-- shown sorted to people, so byte order is the right one.
ALTER TABLE jobs
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN tenant TYPE TEXT COLLATE "C",
    ALTER COLUMN concurrency_key TYPE TEXT COLLATE "C",
    ALTER COLUMN unique_key TYPE TEXT COLLATE "C",
    ALTER COLUMN idempotency_key TYPE TEXT COLLATE "C";
ALTER TABLE attempts ALTER COLUMN job_id TYPE TEXT COLLATE "C";
ALTER TABLE tenant_jobs ALTER COLUMN tenant TYPE TEXT COLLATE "C";
ALTER TABLE tenant_usage ALTER COLUMN tenant TYPE TEXT COLLATE "C";
