-- 0011: the user change feed that per-node user caches follow
-- (pgstore.WithUserCache, see pgstore/usercache.go).
--
-- Every write of a user row records the id of the transaction that made
-- it (pg_current_xact_id(), 64 bits: it never wraps), whatever the write
-- path: create, update, import, or a later migration. A cache that has
-- applied a snapshot S reads next the rows whose xid is at least S's xmin:
-- a transaction below it had ended when S was taken, so what it wrote is
-- in S already. Users are never deleted, so rows are all there is to
-- follow; version orders the states of one user.
--
-- Quick on a database of any size: a column with a constant default is
-- added without rewriting the table (the rows there now get xid 0, below
-- every snapshot), and the index is built once.

ALTER TABLE users ADD COLUMN xid xid8 NOT NULL DEFAULT '0';

CREATE INDEX users_xid ON users (xid);

CREATE FUNCTION users_set_xid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.xid := pg_current_xact_id();
    RETURN NEW;
END
$$;

CREATE TRIGGER users_set_xid BEFORE INSERT OR UPDATE ON users
    FOR EACH ROW EXECUTE FUNCTION users_set_xid();
