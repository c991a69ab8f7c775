-- Tokens that can be listed, revoked and expire: each has an `id` (what the
-- list shows and a revoke names; never the secret or its hash), an optional
-- `expires_at`, and `last_used_at` (recorded at most once a minute per
-- process). A token made before this gets an id derived from its hash, so
-- that it is stable; new ones get `tok_` and 16 hex digits of randomness.
ALTER TABLE tokens ADD COLUMN id TEXT;
ALTER TABLE tokens ADD COLUMN expires_at BIGINT;
ALTER TABLE tokens ADD COLUMN last_used_at BIGINT;
UPDATE tokens SET id = 'tok_' || left(hash, 16);
ALTER TABLE tokens ALTER COLUMN id SET NOT NULL;
CREATE UNIQUE INDEX tokens_id ON tokens (id);
