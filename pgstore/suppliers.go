package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/procurekit/procure/internal/textkey"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

var (
	_ supplier.Store  = (*Store)(nil)
	_ supplier.Viewer = (*Store)(nil)
)

// summaryTexts are the text columns of the suppliers table, found by
// reflection on supplier.Summary: one per field that holds text (a
// supplier.Text, NULL for no value and the empty text for ""; or a string
// such as an enum, NULL for ""), named after the field's JSON name in
// snake case (defaultEmailAddress: default_email_address). The reads, the
// writes and the import take their column lists from here, so a text
// field added to Summary needs only its column (a migration);
// suppliertest's EveryFieldRoundTrips fails for a field of another kind
// that this file does not read and write.
var summaryTexts = func() (out []summaryText) {
	for _, f := range reflect.VisibleFields(reflect.TypeFor[supplier.Summary]()) {
		if f.Type != reflect.TypeFor[supplier.Text]() && f.Type.Kind() != reflect.String {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		var col strings.Builder
		for _, r := range name {
			if unicode.IsUpper(r) {
				col.WriteByte('_')
			}
			col.WriteRune(unicode.ToLower(r))
		}
		out = append(out, summaryText{col: col.String(), index: f.Index, text: f.Type.Kind() == reflect.Struct})
	}
	return out
}()

// summaryText is a text column of the suppliers table and its field.
type summaryText struct {
	col   string
	index []int
	text  bool // a supplier.Text; else a string
}

// summaryTextNames are the columns of summaryTexts, in order.
var summaryTextNames = func() []string {
	out := make([]string, len(summaryTexts))
	for i, t := range summaryTexts {
		out[i] = t.col
	}
	return out
}()

// summaryColumns are the columns scanned by scanSummary, in its order.
var summaryColumns = "s.id, " + joinColumns(summaryTextNames, "s.") + ", s.tin_last_verified_date, s.modified_date, s.created_date"

func scanSummary(row pgx.CollectableRow, s *supplier.Summary, extra ...any) error {
	text := make([]pgtype.Text, len(summaryTexts))
	dest := make([]any, 0, len(text)+4+len(extra))
	dest = append(dest, &s.ID)
	for i := range text {
		dest = append(dest, &text[i])
	}
	dest = append(dest, &s.TinLastVerifiedDate, &s.ModifiedDate, &s.CreatedDate)
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return err
	}
	v := reflect.ValueOf(s).Elem()
	for i, t := range summaryTexts {
		f := v.FieldByIndex(t.index)
		switch {
		case !t.text:
			f.SetString(text[i].String)
		case text[i].Valid:
			*f.Addr().Interface().(*supplier.Text) = supplier.NewText(text[i].String)
		}
	}
	// pgx returns timestamptz in the local zone; responses are in UTC.
	s.ModifiedDate = s.ModifiedDate.UTC()
	s.CreatedDate = s.CreatedDate.UTC()
	if s.TinLastVerifiedDate != nil {
		t := s.TinLastVerifiedDate.UTC()
		s.TinLastVerifiedDate = &t
	}
	return nil
}

func collectSummary(row pgx.CollectableRow) (supplier.Summary, error) {
	var s supplier.Summary
	err := scanSummary(row, &s)
	return s, err
}

// orderBy returns the ORDER BY list of a sort of the supplier list over
// the columns of the table aliased t (suppliers or supplier_terms, whose
// id column is idCol), exactly as docs: paging.md defines it: each
// (field, direction) has its own index of the same keys.
func orderBy(s paging.Sort, t, idCol string) (string, error) {
	dir := " ASC"
	if s.Desc {
		dir = " DESC"
	}
	switch s.Field {
	case "name":
		return t + ".name_key" + dir + " NULLS LAST, " + t + "." + idCol, nil
	case "createdDate":
		return t + ".created_date" + dir + ", " + t + "." + idCol, nil
	case "modifiedDate":
		return t + ".modified_date" + dir + ", " + t + "." + idCol, nil
	}
	return "", fmt.Errorf("pgstore: unknown supplier sort field %q", s.Field)
}

// ListSuppliers returns one page of the community's suppliers that match
// q, with the total count of matches (supplier.Store).
//
// The total and the page are read in one round trip from one snapshot (a
// read-only repeatable-read transaction), so they agree even while
// writers commit. Without a query the total is the community's count, or
// with modifiedSince an index-only count from the watermark on; the page
// is an index-only scan of the order's index to the page's offset, then
// the page's rows by primary key. With a query, the same is done over the
// search terms, which carry their supplier's sort keys.
func (s *Store) ListSuppliers(ctx context.Context, community string, q supplier.ListQuery) (paging.Page[supplier.Summary], error) {
	if ix := s.cache.reader(community); ix != nil {
		if err := ctx.Err(); err != nil {
			return paging.Page[supplier.Summary]{}, err
		}
		return ix.List(q, nil)
	}
	r, err := q.Page.Check(supplier.ListPaging)
	if err != nil {
		return paging.Page[supplier.Summary]{}, err
	}
	q.Page = r
	if strings.ContainsRune(q.Query, 0) {
		// PostgreSQL text cannot hold NUL, so no stored term has one.
		return paging.NewPage[supplier.Summary](nil, 0, r), nil
	}
	if textkey.Match(q.Query) == "" {
		// Only combining marks: every value starts with what is left
		// (docs: filters.md).
		q.Query = ""
	}
	count, page, err := listQueries(community, q)
	if err != nil {
		return paging.Page[supplier.Summary]{}, err
	}
	if q.Query == "" && q.ModifiedSince.IsZero() && r.Offset() >= bucketSize {
		return s.listDeep(ctx, community, q, page)
	}
	var total int64
	var items []supplier.Summary
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	if q.Query != "" && !q.ModifiedSince.IsZero() {
		// A search from a watermark: planned for the watermark each time.
		// A generic plan cannot know how few suppliers a poll's watermark
		// keeps, and reads every match's supplier (bench/README.md,
		// session 27).
		b.Queue(`SET LOCAL plan_cache_mode = force_custom_plan`)
	}
	b.Queue(count.sql, count.args...).QueryRow(func(row pgx.Row) error { return row.Scan(&total) })
	b.Queue(page.sql, page.args...).Query(func(rows pgx.Rows) error {
		var err error
		items, err = pgx.CollectRows(rows, collectSummary)
		return err
	})
	b.Queue(`COMMIT`)
	// A failed statement leaves the connection in a transaction: pgxpool
	// then closes it rather than reuse it.
	if err := s.rd().SendBatch(ctx, b).Close(); err != nil {
		return paging.Page[supplier.Summary]{}, fmt.Errorf("pgstore: list suppliers: %w", err)
	}
	return paging.NewPage(items, int(total), r), nil
}

// listDeep reads a deep page of the unfiltered list through the buckets
// (see buckets.go), or with plain, the page query of listQueries, when the
// page reaches the suppliers without a name. Both round trips run in one
// read-only repeatable-read transaction, so the buckets agree with the
// rows.
func (s *Store) listDeep(ctx context.Context, community string, q supplier.ListQuery, plain query) (paging.Page[supplier.Summary], error) {
	fail := func(err error) (paging.Page[supplier.Summary], error) {
		return paging.Page[supplier.Summary]{}, fmt.Errorf("pgstore: list suppliers: %w", err)
	}
	conn, err := s.rd().Acquire(ctx)
	if err != nil {
		return fail(err)
	}
	// A connection left in the transaction by an error is closed by
	// Release, not reused.
	defer conn.Release()
	ord := bucketOrd(q.Page.Sort)
	off, size := int64(q.Page.Offset()), int64(q.Page.Size)
	var total, before, bucketed int64
	var lo string
	var hi *string
	found := false
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	b.Queue(`SELECT coalesce((SELECT supplier_count FROM communities WHERE id = $1), 0)`, community).
		QueryRow(func(row pgx.Row) error { return row.Scan(&total) })
	b.Queue(bucketLookupSQL(q.Page.Sort.Desc), community, int16(ord), off).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			found = true
			if err := rows.Scan(&lo, &hi, &before, &bucketed); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return fail(err)
	}
	page := plain
	if found && off+size <= bucketed {
		inner, err := orderBy(q.Page.Sort, "i", "id")
		if err != nil {
			return fail(err)
		}
		outer, _ := orderBy(q.Page.Sort, "s", "id")
		args := []any{community}
		bound := ""
		col := "i." + bucketColumn(ord)
		switch {
		case !q.Page.Sort.Desc && lo != "":
			v, err := bucketArg(ord, lo)
			if err != nil {
				return fail(err)
			}
			args, bound = append(args, v), ` AND `+col+` >= $2`
		case q.Page.Sort.Desc && hi != nil:
			v, err := bucketArg(ord, *hi)
			if err != nil {
				return fail(err)
			}
			args, bound = append(args, v), ` AND `+col+` < $2`
		}
		page = query{`SELECT ` + summaryColumns + ` FROM (SELECT i.id FROM suppliers i WHERE i.community_id = $1` + bound + `
			ORDER BY ` + inner + limitOffset(size, off-before) + `) p
			JOIN suppliers s ON s.community_id = $1 AND s.id = p.id
			ORDER BY ` + outer, args}
	}
	var items []supplier.Summary
	b = &pgx.Batch{}
	b.Queue(page.sql, page.args...).Query(func(rows pgx.Rows) error {
		var err error
		items, err = pgx.CollectRows(rows, collectSummary)
		return err
	})
	b.Queue(`COMMIT`)
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return fail(err)
	}
	return paging.NewPage(items, int(total), q.Page), nil
}

// query is one SQL statement and its arguments.
type query struct {
	sql  string
	args []any
}

// listQueries returns the two statements of a supplier list: the total
// count of matches (one row, one bigint) and the page (summaryColumns).
// q.Page has passed Check.
func listQueries(community string, q supplier.ListQuery) (count, page query, err error) {
	off, size := int64(q.Page.Offset()), int64(q.Page.Size)
	since := !q.ModifiedSince.IsZero()
	ms := ceilMicros(q.ModifiedSince)

	if q.Query == "" {
		inner, err := orderBy(q.Page.Sort, "i", "id")
		if err != nil {
			return query{}, query{}, err
		}
		outer, _ := orderBy(q.Page.Sort, "s", "id")
		args := []any{community}
		filter := ""
		if since {
			args = append(args, ms)
			filter = ` AND i.modified_date >= $2`
			count = query{`SELECT count(*) FROM suppliers i WHERE i.community_id = $1` + filter, args}
		} else {
			count = query{`SELECT coalesce((SELECT supplier_count FROM communities WHERE id = $1), 0)`, args}
		}
		page = query{`SELECT ` + summaryColumns + ` FROM (SELECT i.id FROM suppliers i WHERE i.community_id = $1` + filter + `
			ORDER BY ` + inner + limitOffset(size, off) + `) p
			JOIN suppliers s ON s.community_id = $1 AND s.id = p.id
			ORDER BY ` + outer, args}
		return count, page, nil
	}

	inner, err := orderBy(q.Page.Sort, "i", "id")
	if err != nil {
		return query{}, query{}, err
	}
	outer, _ := orderBy(q.Page.Sort, "s", "id")
	// Terms are match keys (internal/textkey): a supplier matches when
	// one of its terms starts with the query's match key, which is valid
	// UTF-8, as PostgreSQL text requires.
	lo := textkey.Match(q.Query)
	hi, bounded := prefixEnd(lo)
	args := []any{community, lo}
	termRange := `t.term >= $2`
	if bounded {
		args = append(args, hi)
		termRange += ` AND t.term < $3`
	} else {
		termRange += ` AND starts_with(t.term, $2)`
	}
	// A supplier may have several terms in the range: only its first has
	// lcp_prev below the prefix's length (see migration 0001).
	args = append(args, int32(min(len(lo), math.MaxInt32)))
	termRange += ` AND t.lcp_prev < $` + itoa(len(args))
	// The terms hold no sort keys and no modifiedDate (migration 0012):
	// the matches are joined to their suppliers' rows for them. A shallow
	// page is planned freely: for a query that matches many suppliers,
	// PostgreSQL walks the order's index and checks each supplier's terms
	// until the page is full, faster than the terms with their keys did
	// (bench/README.md, session 27). A deep page needs every match sorted,
	// and for a query that matches many suppliers a free plan reads the
	// suppliers of every community in a sequential scan for a hash join;
	// there the lateral subquery's OFFSET 0 keeps the join a lookup by
	// primary key a match.
	join := `JOIN suppliers i ON i.community_id = $1 AND i.id = t.supplier_id`
	if off >= int64(bucketSize) {
		join = `CROSS JOIN LATERAL (SELECT i.id, i.name_key, i.created_date, i.modified_date FROM suppliers i
			WHERE i.community_id = $1 AND i.id = t.supplier_id OFFSET 0) i`
	}
	matches := `supplier_terms t ` + join + `
			WHERE t.community_id = $1 AND ` + termRange
	if since {
		args = append(args, ms)
		matches += ` AND i.modified_date >= $` + itoa(len(args))
		count = query{`SELECT count(*) FROM ` + matches, args}
	} else {
		count = query{`SELECT count(*) FROM supplier_terms t WHERE t.community_id = $1 AND ` + termRange, args}
	}
	page = query{`SELECT ` + summaryColumns + ` FROM (SELECT i.id FROM ` + matches + `
			ORDER BY ` + inner + limitOffset(size, off) + `) m
		JOIN suppliers s ON s.community_id = $1 AND s.id = m.id
		ORDER BY ` + outer, args}
	return count, page, nil
}

// limitOffset is the LIMIT and OFFSET of a page, as literals: with
// parameters there, a generic plan (what a prepared statement gets after a
// few executions) would be made for an unknown limit, which PostgreSQL
// takes for a tenth of the table, and would sort the whole community
// instead of walking an index.
func limitOffset(size, off int64) string {
	return ` LIMIT ` + strconv.FormatInt(size, 10) + ` OFFSET ` + strconv.FormatInt(off, 10)
}

// prefixEnd returns the least string greater than every string that starts
// with p, in byte order (COLLATE "C"), so that "starts with p" is the range
// [p, end). It increments the last code point that can be incremented
// (skipping the surrogates, which UTF-8 text cannot hold); ok is false when
// there is none (p is empty or only U+10FFFF), and the caller then checks
// the prefix itself.
func prefixEnd(p string) (end string, ok bool) {
	for p != "" {
		r, size := utf8.DecodeLastRuneInString(p)
		p = p[:len(p)-size]
		if r == utf8.RuneError && size <= 1 {
			return "", false // not UTF-8 (a match key never is)
		}
		if r < utf8.MaxRune {
			r++
			if r == 0xD800 {
				r = 0xE000
			}
			return p + string(r), true
		}
	}
	return "", false
}

// Supplier returns one supplier in full, or an error matching
// supplier.ErrNotFound (supplier.Store).
func (s *Store) Supplier(ctx context.Context, community string, id uuid.UUID) (supplier.Detail, error) {
	if ix := s.cache.reader(community); ix != nil {
		if err := ctx.Err(); err != nil {
			return supplier.Detail{}, err
		}
		// Made from the cache's record for this call.
		return ix.Supplier(id)
	}
	return s.supplierFromDB(ctx, community, id)
}

// supplierFromDB reads one supplier in full from the database.
func (s *Store) supplierFromDB(ctx context.Context, community string, id uuid.UUID) (supplier.Detail, error) {
	r, found, err := loadRecord(ctx, s.rd(), community, id)
	if err != nil {
		return supplier.Detail{}, fmt.Errorf("pgstore: supplier: %w", err)
	}
	if !found {
		return supplier.Detail{}, fmt.Errorf("pgstore: supplier %s: %w", id, supplier.ErrNotFound)
	}
	return r.Detail, nil
}

// ViewSupplier lends view one supplier in full (supplier.Viewer): from
// the node's cache when it serves the community, in memory reused once
// view returns; otherwise read from the database.
func (s *Store) ViewSupplier(ctx context.Context, community string, id uuid.UUID, view func(*supplier.Detail) error) error {
	if ix := s.cache.reader(community); ix != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		return ix.ViewSupplier(id, view)
	}
	d, err := s.supplierFromDB(ctx, community, id)
	if err != nil {
		return err
	}
	return view(&d)
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// loadRecord reads a supplier's detail and keywords (not its contacts and
// addresses); found is false when the community has no such supplier.
func loadRecord(ctx context.Context, q querier, community string, id uuid.UUID) (r supplier.Record, found bool, err error) {
	rows, err := q.Query(ctx, loadRecordSQL, community, id)
	if err != nil {
		return r, false, err
	}
	return collectRecord(rows)
}

var loadRecordSQL = `SELECT ` + summaryColumns + `, s.details, s.keywords FROM suppliers s
	WHERE s.community_id = $1 AND s.id = $2`

// collectRecord reads the result of loadRecordSQL.
func collectRecord(rows pgx.Rows) (r supplier.Record, found bool, err error) {
	r, err = pgx.CollectExactlyOneRow(rows, scanRecord)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, err
}

// scanRecord reads a row of summaryColumns, details and keywords: a
// supplier's detail and keywords.
func scanRecord(row pgx.CollectableRow) (supplier.Record, error) {
	var r supplier.Record
	var raw []byte
	if err := scanSummary(row, &r.Summary, &raw, &r.Keywords); err != nil {
		return r, err
	}
	if len(r.Keywords) == 0 {
		r.Keywords = nil
	}
	if raw != nil {
		var det details
		if err := json.Unmarshal(raw, &det); err != nil {
			return r, err
		}
		det.restore(&r.Detail)
	}
	return r, nil
}

// ListContacts returns one page of the supplier's contacts, ordered by
// name, or an error matching supplier.ErrNotFound (supplier.Store).
func (s *Store) ListContacts(ctx context.Context, community string, supplierID uuid.UUID, p paging.Request) (paging.Page[supplier.Contact], error) {
	if ix := s.cache.reader(community); ix != nil {
		if err := ctx.Err(); err != nil {
			return paging.Page[supplier.Contact]{}, err
		}
		return ix.Contacts(supplierID, p)
	}
	p, err := p.Check(supplier.ContactPaging)
	if err != nil {
		return paging.Page[supplier.Contact]{}, err
	}
	dir := ""
	if p.Sort.Desc {
		dir = " DESC"
	}
	items, total, err := listChildren[supplier.Contact](ctx, s, "supplier_contacts", community, supplierID,
		"", nil, "name_key"+dir+" NULLS LAST, id", p)
	if err != nil {
		return paging.Page[supplier.Contact]{}, fmt.Errorf("pgstore: list contacts: %w", err)
	}
	return paging.NewPage(items, total, p), nil
}

// ListRemittanceAddresses returns one page of the supplier's remittance
// addresses that match q, or an error matching supplier.ErrNotFound
// (supplier.Store).
func (s *Store) ListRemittanceAddresses(ctx context.Context, community string, supplierID uuid.UUID, q supplier.AddressQuery) (paging.Page[supplier.RemittanceAddress], error) {
	if ix := s.cache.reader(community); ix != nil {
		if err := ctx.Err(); err != nil {
			return paging.Page[supplier.RemittanceAddress]{}, err
		}
		return ix.RemittanceAddresses(supplierID, q)
	}
	r, err := q.Page.Check(supplier.AddressPaging)
	if err != nil {
		return paging.Page[supplier.RemittanceAddress]{}, err
	}
	q.Page = r
	dir := ""
	if q.Page.Sort.Desc {
		dir = " DESC"
	}
	var order string
	switch q.Page.Sort.Field {
	case "companyName":
		order = "company_name_key" + dir + " NULLS LAST, id"
	case "modifiedDate":
		order = "modified_date" + dir + ", id"
	default:
		return paging.Page[supplier.RemittanceAddress]{}, fmt.Errorf("pgstore: unknown remittance address sort field %q", q.Page.Sort.Field)
	}
	var filter string
	var arg any
	if !q.ModifiedSince.IsZero() {
		filter, arg = " AND modified_date >= $3", ceilMicros(q.ModifiedSince)
	}
	items, total, err := listChildren[supplier.RemittanceAddress](ctx, s, "remittance_addresses", community, supplierID, filter, arg, order, q.Page)
	if err != nil {
		return paging.Page[supplier.RemittanceAddress]{}, fmt.Errorf("pgstore: list remittance addresses: %w", err)
	}
	return paging.NewPage(items, total, q.Page), nil
}

// listChildren reads a page of a supplier's contacts or addresses (stored
// as JSON documents), their total, and whether the supplier exists, in one
// round trip. filter may use $3 (arg).
func listChildren[T any](ctx context.Context, s *Store, table, community string, supplierID uuid.UUID, filter string, arg any, order string, p paging.Request) ([]T, int, error) {
	args := []any{community, supplierID}
	if filter != "" {
		args = append(args, arg)
	}
	n := len(args)
	var exists bool
	var total int
	var items []T
	b := &pgx.Batch{}
	b.Queue(`SELECT EXISTS (SELECT 1 FROM suppliers WHERE community_id = $1 AND id = $2)`, community, supplierID).
		QueryRow(func(row pgx.Row) error { return row.Scan(&exists) })
	b.Queue(`SELECT count(*) FROM `+table+` WHERE community_id = $1 AND supplier_id = $2`+filter, args...).
		QueryRow(func(row pgx.Row) error { return row.Scan(&total) })
	b.Queue(`SELECT doc FROM `+table+` WHERE community_id = $1 AND supplier_id = $2`+filter+`
		ORDER BY `+order+` LIMIT $`+itoa(n+1)+` OFFSET $`+itoa(n+2), append(args, int64(p.Size), int64(p.Offset()))...).
		Query(func(rows pgx.Rows) error {
			var err error
			items, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (T, error) {
				var v T
				var raw []byte
				if err := row.Scan(&raw); err != nil {
					return v, err
				}
				err := json.Unmarshal(raw, &v)
				return v, err
			})
			return err
		})
	if err := s.rd().SendBatch(ctx, b).Close(); err != nil {
		return nil, 0, err
	}
	if !exists {
		return nil, 0, fmt.Errorf("supplier %s: %w", supplierID, supplier.ErrNotFound)
	}
	return items, total, nil
}

// ceilMicros rounds t up to a whole microsecond, the precision of stored
// dates: a stored date d is at or after t exactly when d >= ceilMicros(t).
func ceilMicros(t time.Time) time.Time {
	u := t.Truncate(time.Microsecond)
	if u.Before(t) {
		u = u.Add(time.Microsecond)
	}
	return u.UTC()
}

func itoa(i int) string { return strconv.Itoa(i) }
