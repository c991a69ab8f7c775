-- A tenant's secrets, sealed: XChaCha20-Poly1305 under the server's key
-- (`--secrets-key-file`), with the tenant and name bound in as associated
-- data, so a row copied to another tenant or name does not open. The value
-- is never kept in the clear; `version` counts the puts of one name. Names
-- compare as bytes (`COLLATE "C"`), so a list is in the order SQLite's is.
CREATE TABLE secrets (
    tenant     TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    version    BIGINT NOT NULL,
    nonce      BYTEA NOT NULL,
    ciphertext BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (tenant, name)
);
