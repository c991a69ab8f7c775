-- Events (an outbox): each write that moves jobs adds one row per tenant it
-- touched, holding that write's events for the tenant as a JSON array, in
-- the write's transaction. `gseq` orders every row (the one writer commits
-- in that order; AUTOINCREMENT so that it never goes back, even when the
-- newest rows are pruned); `seq` is the tenant's sequence number of the
-- row's last event, `n` how many it holds.
CREATE TABLE events (
    gseq   INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL,
    seq    INTEGER NOT NULL,
    n      INTEGER NOT NULL,
    at     INTEGER NOT NULL,
    body   TEXT NOT NULL
);
CREATE UNIQUE INDEX events_tenant_seq ON events (tenant, seq);
-- Each tenant's last sequence number given: never goes back.
CREATE TABLE event_heads (
    tenant TEXT PRIMARY KEY,
    seq    INTEGER NOT NULL
) WITHOUT ROWID;

-- Webhooks: a tenant's endpoints, each with the event types it wants.
CREATE TABLE webhooks (
    id         TEXT PRIMARY KEY,
    tenant     TEXT NOT NULL,
    url        TEXT NOT NULL,
    events     TEXT NOT NULL,
    secret     TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX webhooks_tenant ON webhooks (tenant, created_at);
-- One event to send to one webhook, tried until it is answered 2xx or its
-- time runs out (`dead`).
CREATE TABLE webhook_deliveries (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook     TEXT NOT NULL,
    tenant      TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    type        TEXT NOT NULL,
    body        TEXT NOT NULL,
    status      TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    next_at     INTEGER,
    last_at     INTEGER,
    last_status INTEGER,
    last_error  TEXT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE status = 'pending';
-- A webhook's deliveries due first, and the webhooks that have some (a
-- sender takes each webhook's few at a time, so that one endpoint's
-- backlog is never what another's wait behind).
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook, next_at)
    WHERE status = 'pending';
CREATE INDEX webhook_deliveries_of ON webhook_deliveries (webhook, id);
-- How far a reader of the outbox has got (the webhook dispatcher).
CREATE TABLE event_cursors (
    name TEXT PRIMARY KEY,
    gseq INTEGER NOT NULL
) WITHOUT ROWID;
