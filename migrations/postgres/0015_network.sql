-- Outbound HTTP: what each attempt's requests did (JSON, NULL when it made
-- none), and each tenant's requests and bytes by window.
ALTER TABLE attempts ADD COLUMN network text;
ALTER TABLE tenant_usage ADD COLUMN http_requests int8 NOT NULL DEFAULT 0;
ALTER TABLE tenant_usage ADD COLUMN http_bytes int8 NOT NULL DEFAULT 0;
