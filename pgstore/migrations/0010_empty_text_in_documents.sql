-- 0010: the empty string kept in the documents themselves (docs: values.md
-- "Round trip").
--
-- A supplier's optional text is a supplier.Text now, which writes "" for
-- the empty string and leaves out no value, so the JSON documents (the
-- suppliers' details, the contacts' and remittance addresses' docs) carry
-- the difference themselves. Before, their text fields were plain strings
-- that JSON left out when empty, and the empty_text columns listed, by
-- JSON path, the fields that held "" on purpose (and the details held the
-- lists of the default contact and address under
-- defaultContactEmptyText and defaultRemittanceAddressEmptyText). This
-- writes "" at each listed path of each document, drops those two keys,
-- then drops the empty_text columns.
--
-- The supplier's own text columns (name, supplier_id, ...) already hold
-- '' for the empty string and NULL for no value, so a path without a dot
-- (a summary field) changes nothing; the paths with one lead into the
-- details (bankAccount.bankName, emails.ordersEmailAddress, ...). Every
-- listed path's object exists (the stores kept only those), and
-- jsonb_set adds a member only where its object does.

CREATE FUNCTION pg_temp.with_empty_text(doc jsonb, prefix text[], paths text[]) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    p text;
BEGIN
    FOREACH p IN ARRAY coalesce(paths, '{}') LOOP
        doc := jsonb_set(doc, prefix || string_to_array(p, '.'), '""', true);
    END LOOP;
    RETURN doc;
END
$$;

-- The array of a JSON list of paths (NULL when absent).
CREATE FUNCTION pg_temp.paths(list jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg(e) FROM jsonb_array_elements_text(list) AS e
$$;

UPDATE suppliers SET details = (
        pg_temp.with_empty_text(
            pg_temp.with_empty_text(
                pg_temp.with_empty_text(details::jsonb, '{}',
                    ARRAY(SELECT p FROM unnest(empty_text) AS p WHERE p LIKE '%.%')),
                '{defaultContact}', pg_temp.paths(details::jsonb -> 'defaultContactEmptyText')),
            '{defaultRemittanceAddress}', pg_temp.paths(details::jsonb -> 'defaultRemittanceAddressEmptyText'))
        - 'defaultContactEmptyText' - 'defaultRemittanceAddressEmptyText')::json
    WHERE details IS NOT NULL AND (empty_text IS NOT NULL
        OR details::jsonb ? 'defaultContactEmptyText' OR details::jsonb ? 'defaultRemittanceAddressEmptyText');

UPDATE supplier_contacts SET doc = pg_temp.with_empty_text(doc::jsonb, '{}', empty_text)::json
    WHERE empty_text IS NOT NULL;

UPDATE remittance_addresses SET doc = pg_temp.with_empty_text(doc::jsonb, '{}', empty_text)::json
    WHERE empty_text IS NOT NULL;

ALTER TABLE suppliers DROP COLUMN empty_text;
ALTER TABLE supplier_contacts DROP COLUMN empty_text;
ALTER TABLE remittance_addresses DROP COLUMN empty_text;
