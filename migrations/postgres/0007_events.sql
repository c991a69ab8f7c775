-- Events (an outbox): each write that moves jobs adds one row per tenant it
-- touched, holding that write's events for the tenant as a JSON array, in
-- the write's transaction. Writers commit in an order no one of them can
-- see, so a row is put in order after its commit by the sequencer
-- (`store/postgres/events.rs`), which gives it `gseq` (its place among
-- every row) and `seq` (the tenant's sequence number of its last event)
-- in the order of `id`. `id` must come from a sequence with CACHE 1 (the
-- default), so that a row written after another's commit has a larger id.
CREATE TABLE events (
    id     BIGSERIAL PRIMARY KEY,
    tenant TEXT COLLATE "C" NOT NULL,
    n      INTEGER NOT NULL,
    at     BIGINT NOT NULL,
    body   TEXT NOT NULL,
    gseq   BIGINT,
    seq    BIGINT
);
CREATE INDEX events_unsequenced ON events (id) WHERE gseq IS NULL;
CREATE UNIQUE INDEX events_gseq ON events (gseq) WHERE gseq IS NOT NULL;
CREATE UNIQUE INDEX events_tenant_seq ON events (tenant, seq) WHERE seq IS NOT NULL;
-- Each tenant's last sequence number given, and the last place given.
CREATE TABLE event_heads (
    tenant TEXT COLLATE "C" PRIMARY KEY,
    seq    BIGINT NOT NULL
);
CREATE TABLE event_gseq (
    one  BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    gseq BIGINT NOT NULL
);
INSERT INTO event_gseq (one, gseq) VALUES (TRUE, 0);

-- Webhooks: a tenant's endpoints, each with the event types it wants.
CREATE TABLE webhooks (
    id         TEXT PRIMARY KEY,
    tenant     TEXT COLLATE "C" NOT NULL,
    url        TEXT NOT NULL,
    events     TEXT NOT NULL,
    secret     TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX webhooks_tenant ON webhooks (tenant, created_at);
-- One event to send to one webhook, tried until it is answered 2xx or its
-- time runs out (`dead`).
CREATE TABLE webhook_deliveries (
    id          BIGSERIAL PRIMARY KEY,
    webhook     TEXT NOT NULL,
    tenant      TEXT COLLATE "C" NOT NULL,
    seq         BIGINT NOT NULL,
    type        TEXT NOT NULL,
    body        TEXT NOT NULL,
    status      TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    created_at  BIGINT NOT NULL,
    next_at     BIGINT,
    last_at     BIGINT,
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
    gseq BIGINT NOT NULL
);
