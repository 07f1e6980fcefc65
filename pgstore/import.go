package pgstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

// Import upserts the data file f into the store (docs: limits.md "Live
// data": every entity of the file is created or replaced, keeping the
// file's dates; entities not in the file are left alone; importing the
// same file twice changes nothing). It is ImportStream on a file already
// parsed: see there. Import puts the date-times of f's suppliers in normal
// form in place (supplier.Record.Normalize), as datafile.Parse does.
func (s *Store) Import(ctx context.Context, f *datafile.File) (err error) {
	_, done := s.startImport(nil, 0) // nothing to read: counted, not measured
	defer func() { done(err) }()
	defer s.creds.invalidate() // tokens and keys may have changed
	if err := f.Validate(); err != nil {
		return err
	}
	for ci := range f.Communities {
		for si := range f.Communities[ci].Suppliers {
			f.Communities[ci].Suppliers[si].Normalize()
		}
	}
	// A bulk import outlasts the statement timeout.
	ctx = WithoutStatementTimeout(ctx)
	var touched []string
	defer func() { s.cache.wroteAll(touched) }()
	defer func() {
		if err == nil {
			s.cache.imported()
			s.users.imported()
		}
	}()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		im, err := newImporter(ctx, tx)
		if err != nil {
			return err
		}
		defer func() { touched = im.touched }()
		for ci := range f.Communities {
			c := f.Communities[ci]
			for si := range c.Suppliers {
				rec := c.Suppliers[si]
				if err := im.Supplier(ci, si, &rec); err != nil {
					return err
				}
			}
			n := len(c.Suppliers)
			c.Suppliers = nil
			if err := im.Community(ci, &c, n); err != nil {
				return err
			}
		}
		return im.finish()
	})
}

// ImportOptions configure ImportStreamWith.
type ImportOptions struct {
	// Progress, when not nil, is called with the number of bytes of the
	// file read so far, after each read (on the goroutine that reads the
	// input, not the caller's; it should return quickly).
	Progress func(bytesRead int64)
	// Size is the file's size in bytes when known (0 otherwise), for
	// the metric procure_import_size_bytes (WithMetrics).
	Size int64
}

// ImportStream upserts the data file read from r (docs: limits.md "Data
// files" and "Live data") and returns what it did with the entities of
// each kind the file held, all of which are now stored as the file has
// them: how many it created, updated, and found unchanged (and so did not
// write), as memstore's ImportStream does.
//
// The file is read with datafile.Stream, so memory stays bounded whatever
// its size: suppliers and users are copied (COPY) in batches into
// temporary tables and, when their community's entry ends, upserted from
// there with INSERT ... ON CONFLICT DO UPDATE, which leaves a row whose
// content and dates equal the file's untouched. Everything runs in one
// transaction: a file that fails changes nothing, and the error names the
// entry ("communities[1].users[0].id: ..."). A rule datafile.Stream
// checks, or text PostgreSQL cannot hold, is the file's fault (an error
// matching procure.ErrInvalid); a conflict with stored data - a token,
// service account, key or user id of another community, a username
// another user of the community keeps - matches procure.ErrConflict. The
// upserts never write into another community, however they interleave
// with other writes (fencedUpsert). Secrets are stored only as SHA-256
// hashes.
//
// The import runs without the store's statement timeout
// (WithoutStatementTimeout). Nothing is written to the store's tables
// until the whole file is read (suppliers and users wait in temporary
// tables): then each community's row is locked to the end of the
// transaction, so imports and the supplier writes of that community take
// turns, but a file still arriving holds no community's lock. Imported
// dates are
// the file's; the community's modifiedDate high-water mark is raised to
// the latest of them, so later writes still stamp above every date a
// client may have seen.
//
// Per community: name, region and auto-roles are replaced; suppliers are
// upserted with their keywords, and their contacts and remittance
// addresses upserted by id (a contact or address stored but not in the
// file is kept); tokens are upserted by secret; service accounts by id,
// with their allowlist replaced and keys upserted by secret (an import
// never un-revokes a token nor reactivates a key); budgets by
// account; users by id.
func (s *Store) ImportStream(ctx context.Context, r io.Reader) (datafile.ImportCounts, error) {
	return s.ImportStreamWith(ctx, r, ImportOptions{})
}

// ImportStreamWith is ImportStream with options.
func (s *Store) ImportStreamWith(ctx context.Context, r io.Reader, o ImportOptions) (counts datafile.ImportCounts, err error) {
	defer s.creds.invalidate() // tokens and keys may have changed
	r, done := s.startImport(r, o.Size)
	defer func() { done(err) }()
	if o.Progress != nil {
		r = &progressReader{r: r, fn: o.Progress}
	}
	var touched []string
	defer func() { s.cache.wroteAll(touched) }()
	// A bulk import outlasts the statement timeout.
	ctx = WithoutStatementTimeout(ctx)
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		im, err := newImporter(ctx, tx)
		if err != nil {
			return err
		}
		defer func() { touched = im.touched }()
		if err := datafile.Stream(r, im); err != nil {
			return err
		}
		if err := im.finish(); err != nil {
			return err
		}
		counts = im.result()
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.cache.imported()
	s.users.imported()
	return counts, nil
}

type progressReader struct {
	r  io.Reader
	n  atomic.Int64
	fn func(int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.fn(p.n.Add(int64(n)))
	}
	return n, err
}

// importBatch is how many suppliers are copied to the temporary tables at
// a time: what bounds the import's memory.
const importBatch = 2000

var _ datafile.UserHandler = (*importer)(nil)

// importer is a datafile.Handler that writes into one transaction.
type importer struct {
	ctx     context.Context
	tx      pgx.Tx
	counts  map[string]int        // the entities of each kind the file holds
	written datafile.ImportCounts // of them, how many were created and updated
	pending []supplier.Record
	at      []int // supplier index of each pending record
	ci      int
	users   [][]any  // pending users' rows (userColumns, then the index)
	staged  []staged // the communities read, applied by finish
	changed int      // suppliers inserted or changed, for ANALYZE
	touched []string // communities whose suppliers changed
}

func newImporter(ctx context.Context, tx pgx.Tx) (*importer, error) {
	for _, sql := range []string{
		`CREATE TEMP TABLE import_suppliers (LIKE suppliers) ON COMMIT DROP`,
		`CREATE TEMP TABLE import_terms (LIKE supplier_terms) ON COMMIT DROP`,
		`CREATE TEMP TABLE import_contacts (LIKE supplier_contacts) ON COMMIT DROP`,
		`CREATE TEMP TABLE import_addresses (LIKE remittance_addresses) ON COMMIT DROP`,
		`CREATE TEMP TABLE import_changed (id uuid, inserted boolean) ON COMMIT DROP`,
		`CREATE TEMP TABLE import_users (LIKE users INCLUDING DEFAULTS, ord integer NOT NULL) ON COMMIT DROP`,
		// Rows wait here, marked with their community's place in the
		// file (stageKey), until the whole file is read.
		`CREATE INDEX ON import_suppliers (community_id)`,
		`CREATE INDEX ON import_terms (community_id)`,
		`CREATE INDEX ON import_contacts (community_id)`,
		`CREATE INDEX ON import_addresses (community_id)`,
		`CREATE INDEX ON import_users (community_id)`,
	} {
		if _, err := tx.Exec(ctx, sql); err != nil {
			return nil, fmt.Errorf("pgstore: import: %w", err)
		}
	}
	return &importer{ctx: ctx, tx: tx, counts: map[string]int{}, written: datafile.NewImportCounts()}, nil
}

// result is what the import did: of the entities of each kind, those
// neither created nor updated were found unchanged.
func (im *importer) result() datafile.ImportCounts {
	out := datafile.NewImportCounts()
	for _, k := range datafile.Kinds {
		w := im.written[k]
		w.Unchanged = im.counts[k] - w.Created - w.Updated
		out[k] = w
	}
	return out
}

// wrote adds to kind's counts what an upsert wrote.
func (im *importer) wrote(kind string, created, updated int64) {
	im.written.Add(kind, datafile.Outcome{Created: int(created), Updated: int(updated)})
}

// counted makes an upsert (INSERT ... ON CONFLICT DO UPDATE ... WHERE
// <the row differs>) a query of one row: how many rows it inserted, how
// many it updated. A row the WHERE left alone is in neither. (xmax is 0
// on a row version that an insert made, and holds the updater's
// transaction on one ON CONFLICT DO UPDATE made.)
func counted(upsert string) string {
	return `WITH up AS (` + upsert + ` RETURNING xmax = 0 AS inserted)
		SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM up`
}

func communityAt(ci int) string { return fmt.Sprintf("communities[%d]", ci) }

// staged is a community of the file whose entry is read: its suppliers
// and users wait in the temporary tables under stageKey(ci).
type staged struct {
	ci int
	c  *datafile.Community
}

// stageKey marks the rows of community ci in the temporary tables, whose
// id may follow its suppliers and users in the file. No community id
// holds a '#'.
func stageKey(ci int) string { return "#" + strconv.Itoa(ci) }

// Supplier takes one supplier of community ci (datafile.Handler).
func (im *importer) Supplier(ci, si int, rec *supplier.Record) error {
	im.ci = ci
	im.pending = append(im.pending, *rec)
	im.at = append(im.at, si)
	if len(im.pending) >= importBatch {
		return im.flush()
	}
	return nil
}

// flush copies the pending suppliers, with their search terms, contacts
// and addresses, into the temporary tables.
func (im *importer) flush() error {
	if len(im.pending) == 0 {
		return nil
	}
	rs := im.pending
	at := communityAt(im.ci) + ".suppliers"
	ctx, tx := im.ctx, im.tx

	i := 0
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"import_suppliers"}, supplierWriteColumns, pgx.CopyFromFunc(func() ([]any, error) {
		if i == len(rs) {
			return nil, nil
		}
		r := &rs[i]
		i++
		row, err := supplierRow(stageKey(im.ci), r)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", at, im.at[i-1], err)
		}
		return row, nil
	}))
	if err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}

	var termRows, contactRows, addressRows [][]any
	var ts []string
	var lcps []int32
	for k := range rs {
		r := &rs[k]
		ts, lcps = terms(r, ts, lcps)
		for j, t := range ts {
			termRows = append(termRows, []any{stageKey(im.ci), t, r.ID, lcps[j]})
		}
		for _, ct := range r.Contacts {
			doc, err := json.Marshal(ct)
			if err != nil {
				return err
			}
			contactRows = append(contactRows, []any{stageKey(im.ci), r.ID, ct.ID, nullKey(ct.Name), doc})
		}
		for _, a := range r.RemittanceAddresses {
			doc, err := json.Marshal(a)
			if err != nil {
				return err
			}
			addressRows = append(addressRows, []any{stageKey(im.ci), r.ID, a.ID, nullKey(a.CompanyName.String()), a.ModifiedDate, doc})
		}
	}
	copies := []struct {
		table string
		cols  []string
		rows  [][]any
	}{
		{"import_terms", []string{"community_id", "term", "supplier_id", "lcp_prev"}, termRows},
		{"import_contacts", []string{"community_id", "supplier_id", "id", "name_key", "doc"}, contactRows},
		{"import_addresses", []string{"community_id", "supplier_id", "id", "company_name_key", "modified_date", "doc"}, addressRows},
	}
	for _, c := range copies {
		if len(c.rows) == 0 {
			continue
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{c.table}, c.cols, pgx.CopyFromRows(c.rows)); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
	}
	im.counts["suppliers"] += len(rs)
	im.counts["contacts"] += len(contactRows)
	im.counts["remittanceAddresses"] += len(addressRows)
	im.pending, im.at = im.pending[:0], im.at[:0]
	clear(rs) // let the records go
	return nil
}

// distinct is "(t.c, ...) IS DISTINCT FROM (excluded.c, ...)" over cols;
// json columns compare as text (json has no equality).
func distinct(table string, cols []string) string {
	var a, b []string
	for _, c := range cols {
		x, y := table+"."+c, "excluded."+c
		if c == "details" || c == "doc" {
			x, y = x+"::text", y+"::text"
		}
		a, b = append(a, x), append(b, y)
	}
	return "(" + strings.Join(a, ", ") + ") IS DISTINCT FROM (" + strings.Join(b, ", ") + ")"
}

var (
	importSuppliersSQL = `WITH up AS (
		INSERT INTO suppliers (` + joinColumns(supplierWriteColumns, "") + `)
		SELECT $1, ` + joinColumns(supplierWriteColumns[1:], "i.") + ` FROM import_suppliers i WHERE i.community_id = $2
		ON CONFLICT (community_id, id) DO UPDATE SET ` + updateSet(supplierWriteColumns[2:]) + `
		WHERE ` + distinct("suppliers", supplierWriteColumns[2:]) + `
		RETURNING id, xmax = 0 AS inserted)
	INSERT INTO import_changed SELECT id, inserted FROM up`

	importContactsSQL = `INSERT INTO supplier_contacts (community_id, supplier_id, id, name_key, doc)
		SELECT $1, supplier_id, id, name_key, doc FROM import_contacts WHERE community_id = $2
		ON CONFLICT (community_id, supplier_id, id) DO UPDATE SET ` + updateSet([]string{"name_key", "doc"}) + `
		WHERE ` + distinct("supplier_contacts", []string{"name_key", "doc"})

	importAddressesSQL = `INSERT INTO remittance_addresses (community_id, supplier_id, id, company_name_key, modified_date, doc)
		SELECT $1, supplier_id, id, company_name_key, modified_date, doc FROM import_addresses WHERE community_id = $2
		ON CONFLICT (community_id, supplier_id, id) DO UPDATE SET ` + updateSet([]string{"company_name_key", "modified_date", "doc"}) + `
		WHERE ` + distinct("remittance_addresses", []string{"company_name_key", "modified_date", "doc"})
)

// Community takes community ci once its entry is complete: its suppliers
// went to Supplier before (datafile.Handler), its users to User. Nothing
// is written to the store's tables yet: finish applies every community
// once the whole file is read, so that no community's row is locked while
// the file is still arriving (a slow or stalled upload holds no lock).
func (im *importer) Community(ci int, c *datafile.Community, _ int) error {
	im.ci = ci
	if err := im.flush(); err != nil {
		return err
	}
	// Users of a File (Import) take the streamed users' way.
	for ui := range c.Users {
		if err := im.User(ci, ui, &c.Users[ui]); err != nil {
			return err
		}
	}
	c.Users = nil
	if err := im.flushUsers(ci); err != nil {
		return err
	}
	im.staged = append(im.staged, staged{ci: ci, c: c})
	return nil
}

// apply writes community ci, staged by Community.
func (im *importer) apply(ci int, c *datafile.Community) error {
	at := communityAt(ci)
	key := stageKey(ci)
	ctx, tx := im.ctx, im.tx
	autoRoles := c.AutoRoles
	if autoRoles == nil {
		autoRoles = []string{}
	}
	// The upsert locks the community's row to the end of the
	// transaction, whether it changes it or not (ON CONFLICT DO UPDATE
	// locks the row it finds): the community's supplier writes wait for
	// the import.
	var created, updated int64
	if err := tx.QueryRow(ctx, counted(`INSERT INTO communities (id, name, region, auto_roles) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, region = excluded.region, auto_roles = excluded.auto_roles
		WHERE `+distinct("communities", []string{"name", "region", "auto_roles"})),
		c.ID, c.Name, string(c.Region), autoRoles).Scan(&created, &updated); err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	im.wrote(datafile.KindCommunities, created, updated)
	var inserted, changed int
	var childrenChanged int64
	countChildren := func(kind string) func(pgx.Row) error {
		return func(row pgx.Row) error {
			var created, updated int64
			if err := row.Scan(&created, &updated); err != nil {
				return err
			}
			im.wrote(kind, created, updated)
			childrenChanged += created + updated
			return nil
		}
	}
	b := &pgx.Batch{}
	b.Queue(importSuppliersSQL, c.ID, key)
	b.Queue(`SELECT count(*) FILTER (WHERE inserted), count(*) FROM import_changed`).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(&inserted, &changed); err != nil {
			return err
		}
		im.wrote(datafile.KindSuppliers, int64(inserted), int64(changed-inserted))
		return nil
	})
	// The search terms of the suppliers that changed are rewritten.
	b.Queue(`DELETE FROM supplier_terms t USING import_changed c WHERE t.community_id = $1 AND t.supplier_id = c.id`, c.ID)
	b.Queue(`INSERT INTO supplier_terms (community_id, term, supplier_id, lcp_prev)
		SELECT $1, t.term, t.supplier_id, t.lcp_prev
		FROM import_terms t JOIN import_changed c ON c.id = t.supplier_id WHERE t.community_id = $2`, c.ID, key)
	b.Queue(counted(importContactsSQL), c.ID, key).QueryRow(countChildren(datafile.KindContacts))
	b.Queue(counted(importAddressesSQL), c.ID, key).QueryRow(countChildren(datafile.KindRemittanceAddresses))
	b.Queue(`UPDATE communities SET
		supplier_count = supplier_count + (SELECT count(*) FROM import_changed WHERE inserted),
		last_modified = greatest(last_modified,
			(SELECT max(modified_date) FROM import_suppliers WHERE community_id = $2),
			(SELECT max(modified_date) FROM import_addresses WHERE community_id = $2),
			(SELECT max((doc->>'modifiedDate')::timestamptz) FROM import_contacts WHERE community_id = $2))
		WHERE id = $1`, c.ID, key)
	b.Queue(`TRUNCATE import_changed`)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("%s.suppliers: %w", at, err)
	}
	im.changed += changed
	if changed > 0 {
		if err := rebuildBuckets(ctx, tx, []string{c.ID}); err != nil {
			return fmt.Errorf("%s.suppliers: %w", at, err)
		}
	}
	if changed > 0 || childrenChanged > 0 {
		// The file's dates may lie below the high-water mark, where the
		// caches' feed does not look: they reload the community instead
		// (cache.go).
		if _, err := tx.Exec(ctx, `UPDATE communities SET supplier_generation = supplier_generation + 1 WHERE id = $1`, c.ID); err != nil {
			return fmt.Errorf("%s.suppliers: %w", at, err)
		}
		im.touched = append(im.touched, c.ID)
	}
	for _, f := range []func(*importer, string, *datafile.Community) error{(*importer).importTokens, (*importer).importAccounts, (*importer).importBudgets} {
		if err := f(im, at, c); err != nil {
			return err
		}
	}
	if err := im.importUsers(ci, c); err != nil {
		return err
	}
	im.counts["communities"]++
	im.counts["tokens"] += len(c.Tokens)
	im.counts["serviceAccounts"] += len(c.ServiceAccounts)
	im.counts["budgets"] += len(c.Budgets)
	return nil
}

// finish applies the communities of a file read whole, then gives fresh
// planner statistics after a large import, so that the planner sees the new data at once rather than when
// autovacuum gets to it.
func (im *importer) finish() error {
	for _, st := range im.staged {
		if err := im.apply(st.ci, st.c); err != nil {
			return err
		}
	}
	if im.changed < 10_000 {
		return nil
	}
	for _, table := range []string{"suppliers", "supplier_terms", "supplier_contacts", "remittance_addresses"} {
		if _, err := im.tx.Exec(im.ctx, "ANALYZE "+table); err != nil {
			return fmt.Errorf("pgstore: import: analyze %s: %w", table, err)
		}
	}
	return nil
}

// countBatch runs b, whose queries each answer one row of two counts
// (counted's), and returns them; when query i fails it returns what
// name(i, err) makes of the error.
func countBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch, name func(i int, err error) error) ([][2]int64, error) {
	out := make([][2]int64, b.Len())
	if b.Len() == 0 {
		return out, nil
	}
	br := tx.SendBatch(ctx, b)
	for i := range b.Len() {
		if err := br.QueryRow().Scan(&out[i][0], &out[i][1]); err != nil {
			closeErr := br.Close()
			_ = closeErr // the batch has failed already; its first error is the one to report
			return nil, name(i, err)
		}
	}
	return out, br.Close()
}

// foreignEntry returns the index of the first of keys (an array
// parameter of type typ) that column col of table holds for another
// community than community, or -1.
//
// fencedUpsert: the upserts of rows keyed across communities (users,
// tokens, service accounts) update only a row of the importing
// community (WHERE t.community_id = excluded.community_id in the
// statement itself), and foreignEntry runs after them. A row the fence
// skipped is one another community holds; ON CONFLICT locked it, so it
// is still there, still the other community's, when foreignEntry reads
// it, and the import fails with procure.ErrConflict naming the entry.
// A check before the upsert (as the import once did) leaves a gap in
// which another community creates the id and the upsert overwrites it.
func foreignEntry(ctx context.Context, tx pgx.Tx, table, col, typ, community string, keys any) (int, error) {
	var i int64
	err := tx.QueryRow(ctx, `SELECT u.i FROM unnest($1::`+typ+`[]) WITH ORDINALITY AS u(k, i)
		JOIN `+table+` t ON t.`+col+` = u.k WHERE t.community_id <> $2 ORDER BY u.i LIMIT 1`, keys, community).Scan(&i)
	if errors.Is(err, pgx.ErrNoRows) {
		return -1, nil
	}
	if err != nil {
		return -1, err
	}
	return int(i) - 1, nil
}

// keyLockKeys are the second keys of AddKey's advisory locks on hashes
// (keyHashLock).
func keyLockKeys(hashes [][]byte) []int32 {
	out := make([]int32, len(hashes))
	for i, h := range hashes {
		out[i] = int32(binary.BigEndian.Uint32(h[:4]))
	}
	return out
}

func (im *importer) importTokens(at string, c *datafile.Community) error {
	if len(c.Tokens) == 0 {
		return nil
	}
	ctx, tx := im.ctx, im.tx
	hashes := make([][]byte, len(c.Tokens))
	for i, t := range c.Tokens {
		h := auth.HashSecret(t.Token)
		hashes[i] = h[:]
	}
	b := &pgx.Batch{}
	for i, t := range c.Tokens {
		scopes := t.Scopes
		if scopes == nil {
			scopes = []string{}
		}
		var expires any
		if t.Expires != nil {
			expires = *t.Expires
		}
		// An import never un-revokes (docs: datafile.md "Import"): a
		// token revoked through the admin API stays revoked whatever an
		// older file says.
		// The community fence is part of the upsert (fencedUpsert).
		b.Queue(counted(`INSERT INTO tokens (hash, community_id, scopes, expires, revoked) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (hash) DO UPDATE SET scopes = excluded.scopes, expires = excluded.expires, revoked = tokens.revoked OR excluded.revoked
			WHERE tokens.community_id = excluded.community_id
				AND (`+distinct("tokens", []string{"scopes", "expires"})+` OR (excluded.revoked AND NOT tokens.revoked))`),
			hashes[i], c.ID, scopes, expires, t.Revoked)
	}
	n, err := countBatch(ctx, tx, b, func(i int, err error) error {
		return fmt.Errorf("%s.tokens[%d]: %w", at, i, err)
	})
	if err != nil {
		return err
	}
	for _, w := range n {
		im.wrote(datafile.KindTokens, w[0], w[1])
	}
	if i, err := foreignEntry(ctx, tx, "tokens", "hash", "bytea", c.ID, hashes); err != nil {
		return fmt.Errorf("%s.tokens: %w", at, err)
	} else if i >= 0 {
		// Never echo the token, nor its hash.
		return fmt.Errorf("%s.tokens[%d].token: the same token belongs to another community: %w", at, i, procure.ErrConflict)
	}
	return nil
}

func (im *importer) importAccounts(at string, c *datafile.Community) error {
	if len(c.ServiceAccounts) == 0 {
		return nil
	}
	ctx, tx := im.ctx, im.tx
	ids := make([]string, len(c.ServiceAccounts))
	for i, a := range c.ServiceAccounts {
		ids[i] = a.ID
	}
	// The accounts first, fenced by community (fencedUpsert), then the
	// check for ids of another community, then the keys: a key is never
	// written under an account that is not the community's.
	accounts := &pgx.Batch{}
	for ai, a := range c.ServiceAccounts {
		aat := fmt.Sprintf("%s.serviceAccounts[%d]", at, ai)
		ips := make([]netip.Prefix, 0, len(a.AllowedIPs))
		for ii, s := range a.AllowedIPs {
			p, err := auth.ParsePrefix(s)
			if err != nil {
				return procure.Invalid(procure.SourceData, fmt.Sprintf("%s.allowedIPs[%d]", aat, ii), "must be an IP address or CIDR")
			}
			ips = append(ips, p)
		}
		accounts.Queue(counted(`INSERT INTO service_accounts (id, community_id, allowed_ips) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET allowed_ips = excluded.allowed_ips
			WHERE service_accounts.community_id = excluded.community_id
				AND service_accounts.allowed_ips IS DISTINCT FROM excluded.allowed_ips`), a.ID, c.ID, ips)
	}
	written, err := countBatch(ctx, tx, accounts, func(i int, err error) error {
		return fmt.Errorf("%s.serviceAccounts[%d]: %w", at, i, err)
	})
	if err != nil {
		return err
	}
	if i, err := foreignEntry(ctx, tx, "service_accounts", "id", "text", c.ID, ids); err != nil {
		return fmt.Errorf("%s.serviceAccounts: %w", at, err)
	} else if i >= 0 {
		return fmt.Errorf("%s.serviceAccounts[%d].id: a service account with this id belongs to another community: %w", at, i, procure.ErrConflict)
	}
	b := &pgx.Batch{}
	var fields []string
	for ai, a := range c.ServiceAccounts {
		aat := fmt.Sprintf("%s.serviceAccounts[%d]", at, ai)
		// Keys are upserted by secret (docs: datafile.md "Import"): a
		// key the file does not name stays (one added through the admin
		// API, say), a new one is added after the account's others, and
		// an import never reactivates a deactivated key. A secret that
		// another account holds is a conflict.
		hashes := make([][]byte, len(a.Keys))
		active := make([]bool, len(a.Keys))
		for ki, k := range a.Keys {
			h := auth.HashSecret(k.Key)
			hashes[ki], active[ki] = h[:], k.Active
		}
		// AddKey's advisory locks on the hashes (in one order, so two
		// imports cannot deadlock): a key given to another account at
		// the same moment waits, or is seen below.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, k) FROM
			(SELECT DISTINCT k FROM unnest($2::int4[]) AS k ORDER BY k) AS l`, keyHashLock, keyLockKeys(hashes)); err != nil {
			return fmt.Errorf("%s.keys: %w", aat, err)
		}
		var other int
		err := tx.QueryRow(ctx, `SELECT coalesce(min(u.i), 0) FROM unnest($2::bytea[]) WITH ORDINALITY AS u(h, i)
			JOIN service_account_keys k ON k.hash = u.h WHERE k.account_id <> $1`, a.ID, hashes).Scan(&other)
		if err != nil {
			return fmt.Errorf("%s.keys: %w", aat, err)
		}
		if other > 0 {
			return fmt.Errorf("%s.keys[%d].key: the secret belongs to another service account: %w", aat, other-1, procure.ErrConflict)
		}
		// Both count the keys they change (as counted's two columns): a
		// key added or deactivated updates its account.
		b.Queue(`WITH k AS (UPDATE service_account_keys k SET active = false FROM unnest($2::bytea[], $3::bool[]) AS u(h, a)
			WHERE k.account_id = $1 AND k.hash = u.h AND k.active AND NOT u.a RETURNING 1)
			SELECT count(*), 0 FROM k`, a.ID, hashes, active)
		fields = append(fields, aat+".keys")
		b.Queue(`WITH k AS (INSERT INTO service_account_keys (account_id, ord, hash, active)
			SELECT $1, coalesce((SELECT max(ord) FROM service_account_keys WHERE account_id = $1), -1) + u.i, u.h, u.a
			FROM unnest($2::bytea[], $3::bool[]) WITH ORDINALITY AS u(h, a, i)
			WHERE NOT EXISTS (SELECT 1 FROM service_account_keys k WHERE k.account_id = $1 AND k.hash = u.h) RETURNING 1)
			SELECT count(*), 0 FROM k`, a.ID, hashes, active)
		fields = append(fields, aat+".keys")
	}
	keys, err := countBatch(ctx, tx, b, func(i int, err error) error {
		return fmt.Errorf("%s: %w", fields[i], err)
	})
	if err != nil {
		return err
	}
	for ai, w := range written {
		keysChanged := keys[2*ai][0] + keys[2*ai+1][0]
		switch {
		case w[0] > 0:
			im.wrote(datafile.KindServiceAccounts, 1, 0)
		case w[1] > 0 || keysChanged > 0:
			im.wrote(datafile.KindServiceAccounts, 0, 1)
		}
	}
	return nil
}

func (im *importer) importBudgets(at string, c *datafile.Community) error {
	if len(c.Budgets) == 0 {
		return nil
	}
	ctx, tx := im.ctx, im.tx
	// Account codes are trimmed, as memstore does; two that are the same
	// after trimming are one account twice.
	accounts := make([]string, len(c.Budgets))
	amounts := make([]string, len(c.Budgets))
	seen := make(map[string]bool, len(c.Budgets))
	for i, b := range c.Budgets {
		account := strings.TrimSpace(b.Account)
		if seen[account] {
			return procure.Invalid(procure.SourceData, fmt.Sprintf("%s.budgets[%d].account", at, i), fmt.Sprintf("duplicate account %q", account))
		}
		seen[account] = true
		accounts[i] = account
		amounts[i] = b.Budget.String()
	}
	// numeric travels as text: exact, whatever its scale. An amount
	// equal to the stored one as a number (100.00 and 100) is unchanged,
	// as memstore compares it.
	var created, updated int64
	err := tx.QueryRow(ctx, counted(`INSERT INTO budgets (community_id, account, budget)
		SELECT $1, a, b::numeric FROM unnest($2::text[], $3::text[]) AS t(a, b)
		ON CONFLICT (community_id, account) DO UPDATE SET budget = excluded.budget
		WHERE budgets.budget <> excluded.budget`), c.ID, accounts, amounts).Scan(&created, &updated)
	if err != nil {
		return fmt.Errorf("%s.budgets: %w", at, err)
	}
	im.wrote(datafile.KindBudgets, created, updated)
	return nil
}

// importUsersSQL upserts the users of import_users into community $1,
// in file order, fenced by community (fencedUpsert). An unchanged user is
// not written.
var importUsersSQL = func() string {
	var cols, sel []string
	for _, c := range strings.Split(userColumns, ",") {
		c = strings.TrimSpace(c)
		if c == "community_id" {
			sel = append(sel, "$1")
		} else {
			sel = append(sel, "i."+c)
		}
		if c != "id" && c != "community_id" {
			cols = append(cols, c)
		}
	}
	return `INSERT INTO users (` + userColumns + `)
		SELECT ` + strings.Join(sel, ", ") + ` FROM import_users i WHERE i.community_id = $2 ORDER BY i.ord
		ON CONFLICT (id) DO UPDATE SET ` + updateSet(cols) + `, updated_at = now(),
			version = users.version + 1 -- a changed user is a new version (If-Match)
		WHERE users.community_id = excluded.community_id AND ` + distinct("users", cols)
}()

// User takes one user of community ci (datafile.UserHandler): users are
// copied to a temporary table in batches, so a community of a million
// users is never held in memory, and upserted when the community's entry
// ends.
func (im *importer) User(ci, ui int, u *user.User) error {
	row, err := userRow(stageKey(ci), *u)
	if err != nil {
		return fmt.Errorf("%s.users[%d]: %w", communityAt(ci), ui, err)
	}
	im.users = append(im.users, append(row, int32(ui)))
	if len(im.users) >= importBatch {
		return im.flushUsers(ci)
	}
	return nil
}

// flushUsers copies the pending users into import_users.
func (im *importer) flushUsers(ci int) error {
	if len(im.users) == 0 {
		return nil
	}
	cols := append(strings.Split(strings.Join(strings.Fields(userColumns), ""), ","), "ord")
	if _, err := im.tx.CopyFrom(im.ctx, pgx.Identifier{"import_users"}, cols, pgx.CopyFromRows(im.users)); err != nil {
		return fmt.Errorf("%s.users: %w", communityAt(ci), err)
	}
	im.counts["users"] += len(im.users)
	clear(im.users)
	im.users = im.users[:0]
	return nil
}

// importUsers upserts community ci's users (in import_users) by id.
func (im *importer) importUsers(ci int, c *datafile.Community) error {
	at, key := communityAt(ci), stageKey(ci)
	ctx, tx := im.ctx, im.tx
	// A username a stored user keeps: one the file does not rename.
	var taken int
	err := tx.QueryRow(ctx, `SELECT coalesce(min(i.ord), -1) FROM import_users i
		JOIN users u ON u.community_id = $1 AND u.username_key = i.username_key AND u.id <> i.id
		WHERE i.community_id = $2 AND NOT EXISTS
			(SELECT FROM import_users j WHERE j.community_id = $2 AND j.id = u.id AND j.username_key <> u.username_key)`, c.ID, key).Scan(&taken)
	if err != nil {
		return fmt.Errorf("%s.users: %w", at, err)
	}
	if taken >= 0 {
		return fmt.Errorf("%s.users[%d].username: taken by another user of the community: %w", at, taken, procure.ErrConflict)
	}
	// Users the file renames give up their usernames first, so that
	// users who swap names do not collide in the unique index, which is
	// checked row by row. (A key no username has: usernames hold no
	// control character.)
	if _, err := tx.Exec(ctx, `UPDATE users u SET username_key = E'\x01' || u.id FROM import_users i
		WHERE i.community_id = $2 AND u.id = i.id AND u.community_id = $1 AND u.username_key <> i.username_key`, c.ID, key); err != nil {
		return fmt.Errorf("%s.users: %w", at, err)
	}
	var created, updated int64
	if err := tx.QueryRow(ctx, counted(importUsersSQL), c.ID, key).Scan(&created, &updated); err != nil {
		if uniqueViolation(err) == constraintUserUsername {
			// A user created meanwhile with a username of the file.
			return fmt.Errorf("%s.users: a username is taken by another user of the community: %w", at, procure.ErrConflict)
		}
		return fmt.Errorf("%s.users: %w", at, err)
	}
	var foreign int
	err = tx.QueryRow(ctx, `SELECT coalesce(min(i.ord), -1) FROM import_users i
		JOIN users u ON u.id = i.id WHERE i.community_id = $2 AND u.community_id <> $1`, c.ID, key).Scan(&foreign)
	if err != nil {
		return fmt.Errorf("%s.users: %w", at, err)
	}
	if foreign >= 0 {
		return fmt.Errorf("%s.users[%d].id: a user with this id exists in another community: %w", at, foreign, procure.ErrConflict)
	}
	im.wrote(datafile.KindUsers, created, updated)
	return nil
}
