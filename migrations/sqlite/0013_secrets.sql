-- A tenant's secrets, sealed: XChaCha20-Poly1305 under the server's key
-- (`--secrets-key-file`), with the tenant and name bound in as associated
-- data, so a row copied to another tenant or name does not open. The value
-- is never kept in the clear; `version` counts the puts of one name.
CREATE TABLE secrets (
    tenant     TEXT NOT NULL,
    name       TEXT NOT NULL,
    version    INTEGER NOT NULL,
    nonce      BLOB NOT NULL,
    ciphertext BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, name)
) WITHOUT ROWID;
