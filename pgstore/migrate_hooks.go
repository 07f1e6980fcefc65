package pgstore

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/procurekit/procure/supplier"
)

// migrationHooks run right after the SQL file of their version, in the
// same transaction, for what SQL cannot do the way the application does.
//
// A hook runs this build's code against the schema of its version, so it
// must not use code that expects a later schema. Migration 0009's hook
// computes every name key and search term and rebuilds every community's
// sort buckets, so the earlier hooks that did (0002 folded names, 0008
// rebuilt the buckets it changed) leave that to it: every database that
// runs them runs 0009 after them, in the same transaction.
var migrationHooks = map[int]func(ctx context.Context, tx pgx.Tx) error{
	4: foldUsernameKeys, // username_fold.go
	7: foldUsernameKeys, // the key gained NFC

	// Dates outside the years 1 to 9999 in UTC (dates_repair.go).
	8: clampSupplierDates,

	// Collation keys of names, match keys of search terms.
	9: fillTextKeys,
}

// keyChunk is how many rows fillTextKeys reads at a time: what bounds its
// memory on a database of any size.
var keyChunk = 5000

// fillTextKeys is the hook of migration 0009 (see its file): it computes
// the sort key of every supplier name, contact name and remittance address
// company name, writes every supplier's search terms again as match keys,
// and rebuilds every community's sort buckets.
//
// Rows are read in chunks in primary-key order, and what is computed goes
// to temporary tables by COPY; then one statement per table writes it
// all, the terms in index order: a single join and a sorted insert cost a
// fraction of a statement per chunk.
func fillTextKeys(ctx context.Context, tx pgx.Tx) error {
	if err := fillSupplierKeys(ctx, tx); err != nil {
		return fmt.Errorf("supplier keys: %w", err)
	}
	if err := fillChildKeys(ctx, tx, "supplier_contacts", "name_key", "name"); err != nil {
		return fmt.Errorf("contact keys: %w", err)
	}
	if err := fillChildKeys(ctx, tx, "remittance_addresses", "company_name_key", "companyName"); err != nil {
		return fmt.Errorf("address keys: %w", err)
	}
	return rebuildAllBuckets(ctx, tx)
}

var termColumns = []string{"community_id", "term", "supplier_id", "lcp_prev", "name_key", "created_date", "modified_date"}

func fillSupplierKeys(ctx context.Context, tx pgx.Tx) error {
	for _, sql := range []string{
		`CREATE TEMP TABLE migrate_supplier_keys (community_id text, id uuid, k bytea) ON COMMIT DROP`,
		`CREATE TEMP TABLE migrate_terms (LIKE supplier_terms) ON COMMIT DROP`,
	} {
		if _, err := tx.Exec(ctx, sql); err != nil {
			return err
		}
	}
	var lastC string
	var lastID uuid.UUID
	after, args := `true`, []any(nil)
	for {
		rows, err := tx.Query(ctx, `SELECT community_id, id, name, legal_business_name, supplier_id, keywords, created_date, modified_date
			FROM suppliers WHERE `+after+` ORDER BY community_id, id LIMIT `+itoa(keyChunk), args...)
		if err != nil {
			return err
		}
		var keyRows, termRows [][]any
		var ts []string
		var lcps []int32
		n := 0
		for rows.Next() {
			var r supplier.Record
			var name, legal, sid pgtype.Text
			if err := rows.Scan(&lastC, &lastID, &name, &legal, &sid, &r.Keywords, &r.CreatedDate, &r.ModifiedDate); err != nil {
				rows.Close()
				return err
			}
			n++
			r.ID, r.Name, r.LegalBusinessName, r.SupplierID = lastID, supplier.NewText(name.String), supplier.NewText(legal.String), supplier.NewText(sid.String)
			key := nullKey(r.Name.String())
			if key != nil {
				keyRows = append(keyRows, []any{lastC, r.ID, key})
			}
			ts, lcps = terms(&r, ts, lcps)
			for j, t := range ts {
				termRows = append(termRows, []any{lastC, t, r.ID, lcps[j], key, r.CreatedDate, r.ModifiedDate})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if err := copyRows(ctx, tx, "migrate_supplier_keys", []string{"community_id", "id", "k"}, keyRows); err != nil {
			return err
		}
		if err := copyRows(ctx, tx, "migrate_terms", termColumns, termRows); err != nil {
			return err
		}
		if n < keyChunk {
			break
		}
		after, args = `(community_id, id) > ($1, $2)`, []any{lastC, lastID}
	}
	if _, err := tx.Exec(ctx, `UPDATE suppliers s SET name_key = k.k FROM migrate_supplier_keys k
		WHERE s.community_id = k.community_id AND s.id = k.id`); err != nil {
		return err
	}
	cols := joinColumns(termColumns, "")
	_, err := tx.Exec(ctx, `INSERT INTO supplier_terms (`+cols+`) SELECT `+cols+` FROM migrate_terms ORDER BY community_id, term, supplier_id`)
	return err
}

// fillChildKeys sets keyCol of every row of table (contacts or addresses)
// to the sort key of the field of its JSON document.
func fillChildKeys(ctx context.Context, tx pgx.Tx, table, keyCol, field string) error {
	tmp := "migrate_" + table
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE `+tmp+` (community_id text, supplier_id uuid, id uuid, k bytea) ON COMMIT DROP`); err != nil {
		return err
	}
	var lastC string
	var lastS, lastID uuid.UUID
	after, args := `true`, []any(nil)
	for {
		rows, err := tx.Query(ctx, `SELECT community_id, supplier_id, id, doc->>'`+field+`' FROM `+table+`
			WHERE `+after+` ORDER BY community_id, supplier_id, id LIMIT `+itoa(keyChunk), args...)
		if err != nil {
			return err
		}
		var keyRows [][]any
		n := 0
		for rows.Next() {
			var text pgtype.Text
			if err := rows.Scan(&lastC, &lastS, &lastID, &text); err != nil {
				rows.Close()
				return err
			}
			n++
			if key := nullKey(text.String); key != nil {
				keyRows = append(keyRows, []any{lastC, lastS, lastID, key})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if err := copyRows(ctx, tx, tmp, []string{"community_id", "supplier_id", "id", "k"}, keyRows); err != nil {
			return err
		}
		if n < keyChunk {
			break
		}
		after, args = `(community_id, supplier_id, id) > ($1, $2, $3)`, []any{lastC, lastS, lastID}
	}
	_, err := tx.Exec(ctx, `UPDATE `+table+` t SET `+keyCol+` = k.k FROM `+tmp+` k
		WHERE t.community_id = k.community_id AND t.supplier_id = k.supplier_id AND t.id = k.id`)
	return err
}

// copyRows copies rows (if any) into table.
func copyRows(ctx context.Context, tx pgx.Tx, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
	return err
}
