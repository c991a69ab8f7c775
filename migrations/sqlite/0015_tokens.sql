-- Tokens that can be listed, revoked and expire: each has an `id` (what the
-- list shows and a revoke names; never the secret or its hash), an optional
-- `expires_at`, and `last_used_at` (recorded at most once a minute per
-- process). A token made before this gets an id derived from its hash, so
-- that it is stable; new ones get `tok_` and 16 hex digits of randomness.
-- Rebuilt rather than altered, so that `id` is NOT NULL and unique.
CREATE TABLE tokens_new (
    hash          TEXT PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    tenant        TEXT REFERENCES tenants (name),
    scopes        TEXT NOT NULL,
    admin         INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER,
    last_used_at  INTEGER
) WITHOUT ROWID;

INSERT INTO tokens_new (hash, id, tenant, scopes, admin, created_at)
    SELECT hash, 'tok_' || substr(hash, 1, 16), tenant, scopes, admin, created_at FROM tokens;

DROP TABLE tokens;
ALTER TABLE tokens_new RENAME TO tokens;
