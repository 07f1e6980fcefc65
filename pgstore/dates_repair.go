package pgstore

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/internal/check"
	"github.com/procurekit/procure/supplier"
)

// clampSupplierDates is the hook of migration 0008 (see its file): it
// clamps every supplier date outside the years 1 to 9999 in UTC, left by
// earlier versions, to the nearest instant in range, in the suppliers and
// their search terms; then it bumps the supplier_generation of the
// communities it changed, so that a cache reloads them. (Their sort
// buckets, whose keys hold the dates, are rebuilt by migration 0009's
// hook, which follows.) A tombstone stamped
// past the range is dropped: the new generation carries the delete to
// every cache instead.
func clampSupplierDates(ctx context.Context, tx pgx.Tx) error {
	lo, hi := check.MinInstant, supplier.LastStamp
	clamp := func(col string) string {
		return col + ` = CASE WHEN ` + col + ` < $1::timestamptz THEN $1::timestamptz WHEN ` + col + ` > $2::timestamptz THEN $2::timestamptz ELSE ` + col + ` END`
	}
	out := func(col string) string { return col + ` NOT BETWEEN $1::timestamptz AND $2::timestamptz` }
	var changed []string
	for _, sql := range []string{
		`UPDATE suppliers SET ` + clamp("modified_date") + `, ` + clamp("created_date") + `, ` + clamp("tin_last_verified_date") +
			` WHERE ` + out("modified_date") + ` OR ` + out("created_date") + ` OR ` + out("tin_last_verified_date") + ` RETURNING community_id`,
		`UPDATE supplier_terms SET ` + clamp("modified_date") + `, ` + clamp("created_date") +
			` WHERE ` + out("modified_date") + ` OR ` + out("created_date") + ` RETURNING community_id`,
		`DELETE FROM supplier_tombstones WHERE ` + out("deleted_at") + ` RETURNING community_id`,
	} {
		rows, err := tx.Query(ctx, sql, lo, hi)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		changed = append(changed, ids...)
	}
	if len(changed) == 0 {
		return nil
	}
	slices.Sort(changed)
	changed = slices.Compact(changed)
	_, err := tx.Exec(ctx, `UPDATE communities SET supplier_generation = supplier_generation + 1 WHERE id = ANY($1)`, changed)
	return err
}
