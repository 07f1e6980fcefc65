-- Optimistic concurrency on both user APIs: every user carries a version,
-- 1 when created or imported, one more on every update (user.Store). The
-- HTTP APIs send it as an ETag and check If-Match against it.
ALTER TABLE users ADD COLUMN version bigint NOT NULL DEFAULT 1;

-- SCIM clients look users up by externalId (filter=externalId eq "..."),
-- and list a community's users in id order.
CREATE INDEX users_community_external_id ON users (community_id, external_id);
CREATE INDEX users_community_id_order ON users (community_id, id COLLATE "C");

-- A SCIM client authenticates with the API key alone (Authorization:
-- Bearer <key>): its account is found by the key's hash.
CREATE INDEX service_account_keys_hash ON service_account_keys (hash);
