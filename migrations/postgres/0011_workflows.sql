-- Workflow definitions, versioned like tasks: each PUT adds the next
-- version of the name; a job pins the version it was enqueued with.
CREATE TABLE workflows (
    tenant text NOT NULL,
    name text NOT NULL,
    version integer NOT NULL,
    spec text NOT NULL,
    created_at bigint NOT NULL,
    PRIMARY KEY (tenant, name, version)
);
