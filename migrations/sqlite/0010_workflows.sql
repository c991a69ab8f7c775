-- Workflow definitions, versioned like tasks: each PUT adds the next
-- version of the name; a job pins the version it was enqueued with.
CREATE TABLE workflows (
    tenant TEXT NOT NULL,
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    spec TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, name, version)
) WITHOUT ROWID;
