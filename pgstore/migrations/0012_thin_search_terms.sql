-- 0012: search terms without their supplier's sort keys (issue 22).
--
-- Since 0002 each row of supplier_terms carried its supplier's name key,
-- createdDate and modifiedDate, so that a search sorted from this table
-- alone. Every put moves a supplier's modifiedDate, so every put rewrote
-- every term of its supplier, and that was about a fifth of what a put
-- cost the database (bench/README.md, session 27). A row now holds only
-- the term, its supplier and lcp_prev: a put writes the terms that it
-- adds or whose lcp_prev changes and deletes the ones it drops
-- (pgstore/suppliers_write.go: termChanges), none when the terms stay,
-- and a search reads the sort keys and modifiedDate from the supplier's
-- row (pgstore/suppliers.go: listQueries).
--
-- Quick on a database of any size: the dropped columns are only marked
-- dropped (rows written from now on leave them out), and the primary
-- key is built again once. Stop the nodes of an earlier build before it
-- runs: their writes name the dropped columns and would fail.

ALTER TABLE supplier_terms
    DROP CONSTRAINT supplier_terms_pkey,
    DROP COLUMN name_key,
    DROP COLUMN created_date,
    DROP COLUMN modified_date;
ALTER TABLE supplier_terms ADD PRIMARY KEY (community_id, term, supplier_id) INCLUDE (lcp_prev);
