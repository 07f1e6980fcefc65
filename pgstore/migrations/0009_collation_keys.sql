-- 0009: names sorted and matched as people read them (docs: paging.md
-- "Ordering", filters.md "Query").
--
-- The sort keys of supplier names, contact names and remittance address
-- company names become bytea: the application's collation keys
-- (internal/textkey: the Unicode Collation Algorithm, root locale, case
-- and accents ignored first, then full strength, then the name's bytes),
-- which bytea compares byte by byte whatever the database's collation.
-- NULL is still an empty name, last in both directions (NULLS LAST).
-- The search terms become match keys (NFD, combining marks removed,
-- case-folded), still text COLLATE "C", so a prefix is still a range
-- scan of the terms' primary key.
--
-- The key columns are dropped and added again (no table rewrite) and
-- filled by the migration's hook (pgstore/migrate_hooks.go), which
-- computes every key in Go, rewrites every search term, and rebuilds the
-- sort buckets of every community; the name buckets hold the keys in hex,
-- whose byte order is the keys' (supplier_buckets.lo stays text).
--
-- A node of an earlier build writes text keys: stop such nodes before
-- this migration runs (their writes would fail on the bytea columns).

DROP INDEX suppliers_name_asc, suppliers_name_desc, suppliers_modified_asc;
ALTER TABLE suppliers DROP COLUMN name_key, ADD COLUMN name_key bytea;
CREATE INDEX suppliers_name_asc ON suppliers (community_id, name_key ASC NULLS LAST, id) INCLUDE (modified_date);
CREATE INDEX suppliers_name_desc ON suppliers (community_id, name_key DESC NULLS LAST, id) INCLUDE (modified_date);
CREATE INDEX suppliers_modified_asc ON suppliers (community_id, modified_date ASC, id) INCLUDE (name_key, created_date);

-- Every term changes (lower case becomes the match key): the hook writes
-- them all again.
TRUNCATE supplier_terms;
ALTER TABLE supplier_terms
    DROP CONSTRAINT supplier_terms_pkey,
    DROP COLUMN name_key,
    ADD COLUMN name_key bytea;
ALTER TABLE supplier_terms ADD PRIMARY KEY (community_id, term, supplier_id)
    INCLUDE (lcp_prev, name_key, created_date, modified_date);

DROP INDEX supplier_contacts_name;
ALTER TABLE supplier_contacts DROP COLUMN name_key, ADD COLUMN name_key bytea;
CREATE INDEX supplier_contacts_name ON supplier_contacts (community_id, supplier_id, name_key NULLS LAST, id);

DROP INDEX remittance_addresses_company;
ALTER TABLE remittance_addresses DROP COLUMN company_name_key, ADD COLUMN company_name_key bytea;
CREATE INDEX remittance_addresses_company ON remittance_addresses (community_id, supplier_id, company_name_key NULLS LAST, id);

TRUNCATE supplier_buckets;
