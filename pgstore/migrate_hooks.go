package pgstore

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// migrationHooks run right after the SQL file of their version, in the
// same transaction, for what SQL cannot do the way the application does.
var migrationHooks = map[int]func(ctx context.Context, tx pgx.Tx) error{
	2: func(ctx context.Context, tx pgx.Tx) error {
		// The buckets of deep pages are cut on the folded name keys.
		if err := foldNameKeys(ctx, tx); err != nil {
			return err
		}
		return rebuildAllBuckets(ctx, tx)
	},
	4: foldUsernameKeys, // username_fold.go
	7: foldUsernameKeys, // the key gained NFC

	// Dates outside the years 1 to 9999 in UTC (dates_repair.go).
	8: clampSupplierDates,
}

// foldNameKeys sets the sort key of every supplier name that is not plain
// ASCII to foldKey's (Go's strings.ToLower, as memstore compares), in the
// suppliers and their search terms: migration 0002 folded ASCII only.
func foldNameKeys(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT community_id, id, name FROM suppliers
		WHERE name IS NOT NULL AND octet_length(name) <> char_length(name)`)
	if err != nil {
		return err
	}
	var communities, keys []string
	var ids []uuid.UUID
	for rows.Next() {
		var c, name string
		var id uuid.UUID
		if err := rows.Scan(&c, &id, &name); err != nil {
			return err
		}
		communities, ids, keys = append(communities, c), append(ids, id), append(keys, foldKey(name))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	for _, sql := range []string{
		`UPDATE suppliers s SET name_key = u.k FROM unnest($1::text[], $2::uuid[], $3::text[]) AS u(c, i, k)
			WHERE s.community_id = u.c AND s.id = u.i`,
		`UPDATE supplier_terms t SET name_key = u.k FROM unnest($1::text[], $2::uuid[], $3::text[]) AS u(c, i, k)
			WHERE t.community_id = u.c AND t.supplier_id = u.i`,
	} {
		if _, err := tx.Exec(ctx, sql, communities, ids, keys); err != nil {
			return fmt.Errorf("fold name keys: %w", err)
		}
	}
	return nil
}
