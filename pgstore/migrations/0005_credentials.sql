-- 0005: the credential lifecycle (docs: live-data.md, "Admin API").
--
-- Tokens and service-account keys are now issued, revoked, deactivated
-- and listed at runtime (auth.TokenWriter, auth.KeyWriter), so each gets
-- an id (not a secret: operators name it to revoke or deactivate), a
-- creation time and the minute it last authenticated a request.
--
-- id is NULL for a credential written without one - by an older version,
-- or by the data-file import, which knows only the secret: its id is then
-- auth.TokenID / auth.KeyID of its hash, a name-based UUID that SQL cannot
-- compute (SHA-1), so the application derives it when reading and stores
-- it before it looks a credential up by id (the partial indexes find the
-- rows still without one).
--
-- last_used_at is written at most once a minute per credential and node:
-- see credentials.go.

ALTER TABLE tokens
    ADD COLUMN id           text,
    ADD COLUMN name         text NOT NULL DEFAULT '',
    ADD COLUMN created_at   timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN last_used_at timestamptz;
-- Token ids are unique across the service, as hashes are.
CREATE UNIQUE INDEX tokens_id ON tokens (id);
CREATE INDEX tokens_without_id ON tokens (hash) WHERE id IS NULL;

ALTER TABLE service_account_keys
    ADD COLUMN id           text,
    ADD COLUMN created_at   timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN last_used_at timestamptz;
-- Key ids are unique per account; a key's hash is unique across the
-- service (the writes check it under a lock: an index would refuse a
-- database that already holds one key in two accounts).
CREATE UNIQUE INDEX service_account_keys_id ON service_account_keys (account_id, id);
-- (0003 made the same index for the SCIM client's lookup by key.)
CREATE INDEX IF NOT EXISTS service_account_keys_hash ON service_account_keys (hash);
CREATE INDEX service_account_keys_without_id ON service_account_keys (account_id) WHERE id IS NULL;

-- The import writes a data file's keys by position (account_id, ord): a
-- position that gets another hash holds another key, with its own id,
-- creation time and use.
CREATE FUNCTION service_account_key_replaced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.hash IS DISTINCT FROM OLD.hash THEN
        NEW.id := NULL;
        NEW.created_at := now();
        NEW.last_used_at := NULL;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER service_account_key_replaced BEFORE UPDATE OF hash ON service_account_keys
    FOR EACH ROW EXECUTE FUNCTION service_account_key_replaced();
