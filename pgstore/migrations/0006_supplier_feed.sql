-- 0006: the supplier change feed that per-node caches follow
-- (pgstore.WithSupplierCache, see pgstore/cache.go).
--
-- A cache follows a community's changes in commit order by reading the
-- suppliers whose modified_date is above the high-water mark
-- (communities.last_modified) it last applied: every write stamps under
-- the community's row lock, so stamps increase in commit order. Two kinds
-- of change do not show that way, and get their own feed:
--
--   * a deleted supplier has no row: each delete now leaves a tombstone
--     stamped like a write (and raises last_modified to it), kept for a
--     day (the deletes prune older ones);
--   * the data-file import keeps the file's dates, which may be below the
--     high-water mark: each import that changes a community's suppliers,
--     contacts or addresses bumps its supplier_generation, and a cache
--     that sees a new generation reloads the community.
--
-- Both statements are quick on a database of any size: a column with a
-- constant default is added without rewriting the table, and the new
-- table starts empty.

ALTER TABLE communities ADD COLUMN supplier_generation bigint NOT NULL DEFAULT 0;

CREATE TABLE supplier_tombstones (
    community_id text NOT NULL,
    deleted_at   timestamptz NOT NULL,
    id           uuid NOT NULL,
    PRIMARY KEY (community_id, deleted_at, id)
);
