-- 0002: live suppliers (docs: live-data.md).
--
-- Suppliers, contacts and remittance addresses are now written one by one
-- at runtime (supplier.Writer), so the per-order positions that 0001
-- precomputed at import are gone. Instead:
--
--   * each of the six orders of the supplier list (name, createdDate,
--     modifiedDate; asc and desc) has its own index, keyed exactly as the
--     order is defined (docs: paging.md: name_key is the lower-cased
--     name, NULL when the name is empty, so NULLS LAST puts it after all
--     others in both directions; ties on id ascending in both directions,
--     which is why a descending order cannot reuse the ascending index
--     backwards). A page is an index-only scan of the narrow index to the
--     page's offset, then 20 rows read by primary key;
--   * communities.supplier_count stays, maintained in the write
--     transaction (writes of one community are serialised by its row, see
--     below), so the unfiltered total is one row read;
--   * communities.last_modified is the community's modifiedDate
--     high-water mark: every supplier write locks its community's row
--     (SELECT ... FOR UPDATE) and stamps greatest(clock_timestamp(),
--     last_modified + 1 microsecond), so stamps are strictly increasing in
--     commit order across all nodes;
--   * the search terms of the prefix query carry the sort keys instead of
--     positions, and are found by supplier for rewriting;
--   * deep pages skip most of the index walk through counted buckets of
--     keys (supplier_buckets).
--
-- Optional text columns become nullable: NULL is "no value", '' is an
-- explicit empty string (docs: values.md "Round trip"). 0001
-- could not tell the two apart, so its '' become NULL. empty_text lists
-- the JSON paths of optional text fields held as "" that live inside the
-- JSON documents (supplier.TextPaths).
--
-- The communities table keeps every column it had (the credential and
-- community code reads and writes them as before); this migration only
-- adds last_modified.

ALTER TABLE communities ADD COLUMN last_modified timestamptz;

DROP INDEX IF EXISTS suppliers_modified;
ALTER TABLE suppliers
    DROP COLUMN pos_name_asc,
    DROP COLUMN pos_name_desc,
    DROP COLUMN pos_created_asc,
    DROP COLUMN pos_created_desc,
    DROP COLUMN pos_modified_asc,
    DROP COLUMN pos_modified_desc,
    ALTER COLUMN community_supplier_id DROP NOT NULL,
    ALTER COLUMN community_supplier_id DROP DEFAULT,
    ALTER COLUMN supplier_id DROP NOT NULL,
    ALTER COLUMN supplier_id DROP DEFAULT,
    ALTER COLUMN name DROP NOT NULL,
    ALTER COLUMN name DROP DEFAULT,
    ALTER COLUMN legal_business_name DROP NOT NULL,
    ALTER COLUMN legal_business_name DROP DEFAULT,
    ALTER COLUMN first_name DROP NOT NULL,
    ALTER COLUMN first_name DROP DEFAULT,
    ALTER COLUMN last_name DROP NOT NULL,
    ALTER COLUMN last_name DROP DEFAULT,
    ALTER COLUMN tax_identification_type DROP NOT NULL,
    ALTER COLUMN tax_identification_type DROP DEFAULT,
    ALTER COLUMN tax_identification_number DROP NOT NULL,
    ALTER COLUMN tax_identification_number DROP DEFAULT,
    ALTER COLUMN tin_verification_status DROP NOT NULL,
    ALTER COLUMN tin_verification_status DROP DEFAULT,
    ALTER COLUMN connection_state DROP NOT NULL,
    ALTER COLUMN connection_state DROP DEFAULT,
    ALTER COLUMN business_number DROP NOT NULL,
    ALTER COLUMN business_number DROP DEFAULT,
    ALTER COLUMN default_email_address DROP NOT NULL,
    ALTER COLUMN default_email_address DROP DEFAULT,
    ADD COLUMN name_key text COLLATE "C",
    ADD COLUMN empty_text text[];

-- lower() under COLLATE "C" folds ASCII only, whatever the database's
-- locale; names with other letters are folded again by the application
-- (strings.ToLower, as memstore does) right after this file runs.
UPDATE suppliers SET
    community_supplier_id = nullif(community_supplier_id, ''),
    supplier_id = nullif(supplier_id, ''),
    name = nullif(name, ''),
    legal_business_name = nullif(legal_business_name, ''),
    first_name = nullif(first_name, ''),
    last_name = nullif(last_name, ''),
    tax_identification_type = nullif(tax_identification_type, ''),
    tax_identification_number = nullif(tax_identification_number, ''),
    tin_verification_status = nullif(tin_verification_status, ''),
    connection_state = nullif(connection_state, ''),
    business_number = nullif(business_number, ''),
    default_email_address = nullif(default_email_address, ''),
    name_key = lower(nullif(name, '') COLLATE "C");

-- The name and createdDate indexes carry modified_date, so that a page of
-- a modifiedSince filter in their order is read from the index alone.
CREATE INDEX suppliers_name_asc ON suppliers (community_id, name_key ASC NULLS LAST, id) INCLUDE (modified_date);
CREATE INDEX suppliers_name_desc ON suppliers (community_id, name_key DESC NULLS LAST, id) INCLUDE (modified_date);
CREATE INDEX suppliers_created_asc ON suppliers (community_id, created_date ASC, id) INCLUDE (modified_date);
CREATE INDEX suppliers_created_desc ON suppliers (community_id, created_date DESC, id) INCLUDE (modified_date);
-- Also the modifiedSince filter: a range scan from the watermark on,
-- which carries the other sort keys so that a filtered page in another
-- order is sorted from this index alone.
CREATE INDEX suppliers_modified_asc ON suppliers (community_id, modified_date ASC, id) INCLUDE (name_key, created_date);
CREATE INDEX suppliers_modified_desc ON suppliers (community_id, modified_date DESC, id);

-- The search terms keep 0001's layout and lcp_prev rule (a supplier
-- matching a prefix on several terms is counted once without DISTINCT),
-- with the sort keys of their supplier in place of its positions.
ALTER TABLE supplier_terms
    DROP CONSTRAINT supplier_terms_pkey,
    DROP COLUMN pos_name_asc,
    DROP COLUMN pos_name_desc,
    DROP COLUMN pos_created_asc,
    DROP COLUMN pos_created_desc,
    DROP COLUMN pos_modified_asc,
    DROP COLUMN pos_modified_desc,
    ADD COLUMN name_key text COLLATE "C",
    ADD COLUMN created_date timestamptz;
UPDATE supplier_terms t SET name_key = s.name_key, created_date = s.created_date
    FROM suppliers s WHERE s.community_id = t.community_id AND s.id = t.supplier_id;
ALTER TABLE supplier_terms ALTER COLUMN created_date SET NOT NULL;
ALTER TABLE supplier_terms ADD PRIMARY KEY (community_id, term, supplier_id)
    INCLUDE (lcp_prev, name_key, created_date, modified_date);
CREATE INDEX supplier_terms_supplier ON supplier_terms (community_id, supplier_id);

-- Deep pages (see pgstore/buckets.go): each community's keys of each
-- order (0 name, 1 createdDate, 2 modifiedDate) cut into buckets of about
-- a thousand consecutive keys, counted exactly by the writes. A bucket
-- holds the keys from lo up to the next bucket's lo. Filled by the
-- application right after this file runs, and rebuilt by each import.
CREATE TABLE supplier_buckets (
    community_id text NOT NULL,
    ord          smallint NOT NULL,
    lo           text COLLATE "C" NOT NULL,
    n            bigint NOT NULL,
    PRIMARY KEY (community_id, ord, lo)
);

ALTER TABLE supplier_contacts ADD COLUMN empty_text text[];
ALTER TABLE remittance_addresses ADD COLUMN empty_text text[];

-- The high-water mark starts at the latest date a client may have seen.
UPDATE communities c SET last_modified = greatest(
    (SELECT max(modified_date) FROM suppliers s WHERE s.community_id = c.id),
    (SELECT max(modified_date) FROM remittance_addresses a WHERE a.community_id = c.id),
    (SELECT max((doc->>'modifiedDate')::timestamptz) FROM supplier_contacts k WHERE k.community_id = c.id));
UPDATE communities c SET supplier_count = (SELECT count(*) FROM suppliers s WHERE s.community_id = c.id);
