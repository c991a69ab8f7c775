-- Outbound HTTP: what each attempt's requests did (JSON, NULL when it made
-- none), and each tenant's requests and bytes by window.
ALTER TABLE attempts ADD COLUMN network TEXT;
ALTER TABLE tenant_usage ADD COLUMN http_requests INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tenant_usage ADD COLUMN http_bytes INTEGER NOT NULL DEFAULT 0;
