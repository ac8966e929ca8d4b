-- 004_downloads: download links that can be shown again.
--
-- A link token is base64url(link_id || MAC(link key, link_id)), link_id being 16 random
-- bytes (app/api/orders/links.c). The row keeps link_id so that GET /v1/orders can render a
-- download's existing link again instead of minting a new one on every listing. link_id
-- alone is not a credential: the MAC half of a token needs the server secret, so a copy
-- of this table gives no working link. token_hash (SHA-256 of the whole token) remains
-- the lookup key of the files location.
--
-- Rows without link_id (none are written by this version) are never rendered again.

ALTER TABLE download_tokens
    ADD COLUMN link_id bytea UNIQUE CHECK (length(link_id) = 16);
