package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

var _ supplier.Store = (*Store)(nil)

// summaryColumns are the columns scanned by scanSummary, in its order.
const summaryColumns = `id, community_supplier_id, supplier_id, name, profile_type, legal_business_name,
	first_name, last_name, tax_identification_type, tax_identification_number, tin_verification_status,
	tin_last_verified_date, connection_state, business_number, default_email_address, modified_date, created_date`

func scanSummary(row pgx.CollectableRow, s *supplier.Summary, extra ...any) error {
	dest := []any{&s.ID, &s.CommunitySupplierID, &s.SupplierID, &s.Name, &s.ProfileType, &s.LegalBusinessName,
		&s.FirstName, &s.LastName, &s.TaxIdentificationType, &s.TaxIdentificationNumber, &s.TinVerificationStatus,
		&s.TinLastVerifiedDate, &s.ConnectionState, &s.BusinessNumber, &s.DefaultEmailAddress, &s.ModifiedDate, &s.CreatedDate}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return err
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

// posColumn is the position column of a sort of the supplier list.
func posColumn(s paging.Sort) (string, error) {
	var col string
	switch s.Field {
	case "name":
		col = "pos_name"
	case "createdDate":
		col = "pos_created"
	case "modifiedDate":
		col = "pos_modified"
	default:
		return "", fmt.Errorf("pgstore: unknown supplier sort field %q", s.Field)
	}
	if s.Desc {
		return col + "_desc", nil
	}
	return col + "_asc", nil
}

// ListSuppliers returns one page of the community's suppliers that match
// q, with the total count of matches (supplier.Store).
//
// Without a query, a page is a range of positions (however deep) and the
// total is the community's count; with modifiedSince alone the total is one
// index probe; with a query, the matching suppliers come from a range scan
// of the search terms.
func (s *Store) ListSuppliers(ctx context.Context, community string, q supplier.ListQuery) (paging.Page[supplier.Summary], error) {
	r, err := q.Page.Check(supplier.ListPaging)
	if err != nil {
		return paging.Page[supplier.Summary]{}, err
	}
	q.Page = r
	if strings.ContainsRune(q.Query, 0) {
		// PostgreSQL text cannot hold NUL, so no stored term has one.
		return paging.NewPage[supplier.Summary](nil, 0, r), nil
	}
	count, page, err := listQueries(community, q)
	if err != nil {
		return paging.Page[supplier.Summary]{}, err
	}
	var total int64
	var items []supplier.Summary
	b := &pgx.Batch{}
	b.Queue(count.sql, count.args...).QueryRow(func(row pgx.Row) error { return row.Scan(&total) })
	b.Queue(page.sql, page.args...).Query(func(rows pgx.Rows) error {
		var err error
		items, err = pgx.CollectRows(rows, collectSummary)
		return err
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return paging.Page[supplier.Summary]{}, fmt.Errorf("pgstore: list suppliers: %w", err)
	}
	return paging.NewPage(items, int(total), r), nil
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
	pos, err := posColumn(q.Page.Sort)
	if err != nil {
		return query{}, query{}, err
	}
	off, size := int64(q.Page.Offset()), int64(q.Page.Size)
	since := !q.ModifiedSince.IsZero()
	ms := ceilMicros(q.ModifiedSince)

	switch {
	case q.Query == "" && !since:
		count = query{`SELECT coalesce((SELECT supplier_count FROM communities WHERE id = $1), 0)`, []any{community}}
		page = query{`SELECT ` + summaryColumns + ` FROM suppliers
			WHERE community_id = $1 AND ` + pos + ` >= $2::bigint AND ` + pos + ` < $3::bigint ORDER BY ` + pos,
			[]any{community, off, off + size}}

	case q.Query == "":
		// Positions in modified order are monotonic in modified_date, so
		// the matches are the suppliers from the first match's position
		// on: their count is the community's count less that position.
		const first = `(SELECT pos_modified_asc FROM suppliers WHERE community_id = $1 AND modified_date >= $2
			ORDER BY modified_date, id LIMIT 1)`
		count = query{`SELECT coalesce((SELECT supplier_count FROM communities WHERE id = $1) - ` + first + `, 0)`, []any{community, ms}}
		switch pos {
		case "pos_modified_asc":
			page = query{`SELECT ` + summaryColumns + ` FROM suppliers
				WHERE community_id = $1 AND pos_modified_asc >= ` + first + ` + $3::bigint AND pos_modified_asc < ` + first + ` + $4::bigint
				ORDER BY pos_modified_asc`, []any{community, ms, off, off + size}}
		case "pos_modified_desc":
			// In descending order the matches come first.
			page = query{`SELECT ` + summaryColumns + ` FROM suppliers
				WHERE community_id = $1 AND pos_modified_desc >= $3::bigint AND pos_modified_desc < $4::bigint AND modified_date >= $2
				ORDER BY pos_modified_desc`, []any{community, ms, off, off + size}}
		default:
			page = query{`SELECT ` + summaryColumns + ` FROM suppliers
				WHERE community_id = $1 AND modified_date >= $2
				ORDER BY ` + pos + ` LIMIT $3 OFFSET $4`, []any{community, ms, size, off}}
		}

	default:
		// foldKey output is valid UTF-8 (strings.ToLower replaces invalid
		// bytes), as PostgreSQL text requires.
		lo := foldKey(q.Query)
		hi, bounded := prefixEnd(lo)
		args := []any{community, lo}
		termRange := `term >= $2`
		if bounded {
			args = append(args, hi)
			termRange += ` AND term < $3`
		} else {
			termRange += ` AND starts_with(term, $2)`
		}
		// A supplier may have several terms in the range: only its first
		// has lcp_prev below the prefix's length (see the migration).
		args = append(args, int32(min(len(lo), math.MaxInt32)))
		termRange += ` AND lcp_prev < $` + itoa(len(args))
		if since {
			args = append(args, ms)
			termRange += ` AND modified_date >= $` + itoa(len(args))
		}
		count = query{`SELECT count(*) FROM supplier_terms WHERE community_id = $1 AND ` + termRange, args}
		n := len(args)
		page = query{`SELECT ` + summaryColumns + ` FROM suppliers
			JOIN (SELECT ` + pos + ` AS p FROM supplier_terms WHERE community_id = $1 AND ` + termRange + `
				ORDER BY 1 LIMIT $` + itoa(n+1) + ` OFFSET $` + itoa(n+2) + `) m ON ` + pos + ` = m.p
			WHERE community_id = $1
			ORDER BY ` + pos, append(args[:n:n], size, off)}
	}
	return count, page, nil
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
			return "", false // not UTF-8 (foldKey never returns such text)
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
	rows, err := s.pool.Query(ctx, `SELECT `+summaryColumns+`, details FROM suppliers WHERE community_id = $1 AND id = $2`, community, id)
	if err != nil {
		return supplier.Detail{}, fmt.Errorf("pgstore: supplier: %w", err)
	}
	d, err := pgx.CollectExactlyOneRow(rows, func(row pgx.CollectableRow) (supplier.Detail, error) {
		var d supplier.Detail
		var raw []byte
		if err := scanSummary(row, &d.Summary, &raw); err != nil {
			return d, err
		}
		if raw != nil {
			var det details
			if err := json.Unmarshal(raw, &det); err != nil {
				return d, err
			}
			d.DefaultContact, d.DefaultRemittanceAddress, d.BankAccount, d.Emails, d.Settings =
				det.DefaultContact, det.DefaultRemittanceAddress, det.BankAccount, det.Emails, det.Settings
		}
		return d, nil
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return supplier.Detail{}, fmt.Errorf("pgstore: supplier %s: %w", id, supplier.ErrNotFound)
	}
	if err != nil {
		return supplier.Detail{}, fmt.Errorf("pgstore: supplier: %w", err)
	}
	return d, nil
}

// ListContacts returns one page of the supplier's contacts, ordered by
// name, or an error matching supplier.ErrNotFound (supplier.Store).
func (s *Store) ListContacts(ctx context.Context, community string, supplierID uuid.UUID, p paging.Request) (paging.Page[supplier.Contact], error) {
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
				return v, json.Unmarshal(raw, &v)
			})
			return err
		})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
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
