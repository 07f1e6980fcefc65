-- 0008: every stored instant within the years 1 to 9999 in UTC
-- (docs: values.md "Dates").
--
-- Earlier versions accepted a date whose UTC form fell outside those years
-- (9999-12-31T23:30:00-01:00 is year 10000 in UTC), and stamped
-- "last + 1 microsecond" past 9999-12-31T23:59:59.999999Z. PostgreSQL
-- holds such a timestamptz, but RFC 3339 cannot write it, so every read
-- of the community failed. The service now refuses both; this migration
-- repairs what was stored before: each such instant is clamped to the
-- nearest one in range (9999-12-31T23:59:59.999999Z or
-- 0001-01-01T00:00:00Z), which keeps every order and filter as it was.
-- The supplier rows, their sort buckets and the caches' generation are
-- repaired by the migration's hook (pgstore/dates_repair.go); the
-- statements below take the tables no bucket depends on. Documents
-- (details, contacts, addresses) never held such a date: encoding one to
-- JSON failed, and the write with it.

UPDATE remittance_addresses SET modified_date = CASE
        WHEN modified_date < '0001-01-01 00:00:00+00' THEN timestamptz '0001-01-01 00:00:00+00'
        ELSE timestamptz '9999-12-31 23:59:59.999999+00' END
    WHERE modified_date NOT BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00';

UPDATE communities SET last_modified = CASE
        WHEN last_modified < '0001-01-01 00:00:00+00' THEN timestamptz '0001-01-01 00:00:00+00'
        ELSE timestamptz '9999-12-31 23:59:59.999999+00' END
    WHERE last_modified NOT BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00';

UPDATE tokens SET expires = CASE
        WHEN expires < '0001-01-01 00:00:00+00' THEN timestamptz '0001-01-01 00:00:00+00'
        ELSE timestamptz '9999-12-31 23:59:59.999999+00' END
    WHERE expires NOT BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00';
