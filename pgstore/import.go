package pgstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
)

// importVersion is mixed into the content hash of a community, so that a
// build that stores data differently re-imports an unchanged file.
const importVersion = "pgstore-import-1"

// Import loads the data file f into the store, all in one transaction: a
// file that fails (a rule datafile.Validate checks, or a conflict that only
// the database can see, such as a user id held by another community)
// changes nothing, and the error names the offending entry
// ("communities[1].users[0].id: ..."). Secrets are stored only as SHA-256
// hashes. Import puts the date-times of f's suppliers in normal form in
// place (supplier.Record.Normalize), as datafile.Parse does.
//
// Importing is per community, and the same file imported again changes
// nothing. For each community of f:
//   - its name, region, auto-roles, bearer tokens, service accounts and
//     budget table, and its suppliers with their contacts and remittance
//     addresses, become exactly those of the file (replacing what a previous
//     import stored: these are written only by Import);
//   - its users are seeded: a user of the file whose id the community does
//     not hold yet is added; one it already holds is left as it is, since
//     the user API may have changed it since the last import.
//
// Communities not in f are left untouched. A community whose entry is
// unchanged since its last import is skipped, so restarting a server that
// imports its data file at start is cheap.
func (s *Store) Import(ctx context.Context, f *datafile.File) error {
	if err := f.Validate(); err != nil {
		return err
	}
	for ci := range f.Communities {
		for si := range f.Communities[ci].Suppliers {
			f.Communities[ci].Suppliers[si].Normalize()
		}
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for ci := range f.Communities {
			at := fmt.Sprintf("communities[%d]", ci)
			if err := importCommunity(ctx, tx, at, &f.Communities[ci]); err != nil {
				return err
			}
		}
		return nil
	})
}

func importCommunity(ctx context.Context, tx pgx.Tx, at string, c *datafile.Community) error {
	sum, err := contentHash(c)
	if err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	// Serialise imports of one community: the row lock is held to the end
	// of the transaction.
	if _, err := tx.Exec(ctx, `INSERT INTO communities (id, region) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, c.ID, string(c.Region)); err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	var old []byte
	if err := tx.QueryRow(ctx, `SELECT content_hash FROM communities WHERE id = $1 FOR UPDATE`, c.ID).Scan(&old); err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	if bytes.Equal(old, sum[:]) {
		return nil
	}

	autoRoles := c.AutoRoles
	if autoRoles == nil {
		autoRoles = []string{}
	}
	if _, err := tx.Exec(ctx, `UPDATE communities SET name = $2, region = $3, auto_roles = $4, supplier_count = $5,
		content_hash = $6, imported_at = now() WHERE id = $1`,
		c.ID, c.Name, string(c.Region), autoRoles, len(c.Suppliers), sum[:]); err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	for _, table := range []string{"suppliers", "supplier_terms", "supplier_contacts", "remittance_addresses", "tokens", "service_accounts", "budgets"} {
		if _, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE community_id = $1", c.ID); err != nil {
			return fmt.Errorf("%s: clear %s: %w", at, table, err)
		}
	}
	if err := importSuppliers(ctx, tx, at, c); err != nil {
		return err
	}
	if err := importTokens(ctx, tx, at, c); err != nil {
		return err
	}
	if err := importAccounts(ctx, tx, at, c); err != nil {
		return err
	}
	if err := importBudgets(ctx, tx, at, c); err != nil {
		return err
	}
	if err := importUsers(ctx, tx, at, c); err != nil {
		return err
	}
	// Fresh statistics, so that the planner sees the new data at once
	// rather than when autovacuum gets to it.
	for _, table := range []string{"suppliers", "supplier_terms", "supplier_contacts", "remittance_addresses"} {
		if _, err := tx.Exec(ctx, "ANALYZE "+table); err != nil {
			return fmt.Errorf("%s: analyze %s: %w", at, table, err)
		}
	}
	return nil
}

// contentHash identifies the content of one community entry.
func contentHash(c *datafile.Community) ([32]byte, error) {
	h := sha256.New()
	h.Write([]byte(importVersion))
	if err := json.NewEncoder(h).Encode(c); err != nil {
		return [32]byte{}, err
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
}

// foldKey is the case-insensitive key of a text: what both stores compare
// for ordering, the prefix query and usernames. It is computed here, not by
// the database, so that it does not depend on the database's locale.
func foldKey(s string) string { return strings.ToLower(s) }

// nullKey is the sort key of a text, or nil (NULL) when the text is empty,
// so that NULLS LAST puts empty values after all others.
func nullKey(s string) any {
	if s == "" {
		return nil
	}
	return foldKey(s)
}

// details holds the nested objects of a SupplierDetail, stored as one JSON
// column.
type details struct {
	DefaultContact           *supplier.Contact           `json:"defaultContact,omitempty"`
	DefaultRemittanceAddress *supplier.RemittanceAddress `json:"defaultRemittanceAddress,omitempty"`
	BankAccount              *supplier.BankAccount       `json:"bankAccount,omitempty"`
	Emails                   *supplier.Emails            `json:"emails,omitempty"`
	Settings                 *supplier.Settings          `json:"settings,omitempty"`
}

func (d details) empty() bool {
	return d.DefaultContact == nil && d.DefaultRemittanceAddress == nil && d.BankAccount == nil && d.Emails == nil && d.Settings == nil
}

// order is one of the six orders of the supplier list.
type order int

const (
	byNameAsc order = iota
	byNameDesc
	byCreatedAsc
	byCreatedDesc
	byModifiedAsc
	byModifiedDesc
	numOrders
)

// positions returns, for each order, each supplier's 0-based position in
// it. The comparisons are those of DECISIONS.md "Paging": names compare by
// foldKey in byte order, empty names last in both directions; dates as
// instants; ties on id ascending.
func positions(rs []supplier.Record) [numOrders][]int32 {
	n := len(rs)
	keys := make([]string, n)
	for i := range rs {
		keys[i] = foldKey(rs[i].Name)
	}
	byID := func(a, b int) int { return bytes.Compare(rs[a].ID[:], rs[b].ID[:]) }
	name := func(desc bool) func(a, b int) int {
		return func(a, b int) int {
			ka, kb := keys[a], keys[b]
			switch {
			case ka == "" && kb == "":
				return byID(a, b)
			case ka == "":
				return 1
			case kb == "":
				return -1
			}
			c := strings.Compare(ka, kb)
			if desc {
				c = -c
			}
			if c != 0 {
				return c
			}
			return byID(a, b)
		}
	}
	date := func(get func(int) time.Time, desc bool) func(a, b int) int {
		return func(a, b int) int {
			c := get(a).Compare(get(b))
			if desc {
				c = -c
			}
			if c != 0 {
				return c
			}
			return byID(a, b)
		}
	}
	created := func(i int) time.Time { return rs[i].CreatedDate }
	modified := func(i int) time.Time { return rs[i].ModifiedDate }
	cmps := [numOrders]func(a, b int) int{
		byNameAsc:      name(false),
		byNameDesc:     name(true),
		byCreatedAsc:   date(created, false),
		byCreatedDesc:  date(created, true),
		byModifiedAsc:  date(modified, false),
		byModifiedDesc: date(modified, true),
	}
	var out [numOrders][]int32
	perm := make([]int, n)
	for o := range numOrders {
		for i := range perm {
			perm[i] = i
		}
		slices.SortFunc(perm, cmps[o])
		pos := make([]int32, n)
		for p, i := range perm {
			pos[i] = int32(p)
		}
		out[o] = pos
	}
	return out
}

var supplierColumns = []string{
	"community_id", "id", "community_supplier_id", "supplier_id", "name", "profile_type",
	"legal_business_name", "first_name", "last_name", "tax_identification_type",
	"tax_identification_number", "tin_verification_status", "tin_last_verified_date",
	"connection_state", "business_number", "default_email_address", "modified_date",
	"created_date", "keywords", "details",
	"pos_name_asc", "pos_name_desc", "pos_created_asc", "pos_created_desc", "pos_modified_asc", "pos_modified_desc",
}

func importSuppliers(ctx context.Context, tx pgx.Tx, at string, c *datafile.Community) error {
	rs := c.Suppliers
	if len(rs) == 0 {
		return nil
	}
	pos := positions(rs)

	// Rows go in name order, so that the default order's index and the
	// table itself are filled in the order the list reads them.
	perm := make([]int, len(rs))
	for i, p := range pos[byNameAsc] {
		perm[p] = i
	}
	var buf bytes.Buffer
	next := 0
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"suppliers"}, supplierColumns, pgx.CopyFromFunc(func() ([]any, error) {
		if next == len(perm) {
			return nil, nil
		}
		i := perm[next]
		next++
		r := &rs[i]
		var det any
		if d := (details{r.DefaultContact, r.DefaultRemittanceAddress, r.BankAccount, r.Emails, r.Settings}); !d.empty() {
			buf.Reset()
			if err := json.NewEncoder(&buf).Encode(d); err != nil {
				return nil, fmt.Errorf("%s.suppliers[%d]: %w", at, i, err)
			}
			det = bytes.TrimSpace(buf.Bytes())
		}
		keywords := r.Keywords
		if keywords == nil {
			keywords = []string{}
		}
		return []any{
			c.ID, r.ID, r.CommunitySupplierID, r.SupplierID, r.Name, string(r.ProfileType),
			r.LegalBusinessName, r.FirstName, r.LastName, string(r.TaxIdentificationType),
			r.TaxIdentificationNumber, string(r.TinVerificationStatus), r.TinLastVerifiedDate,
			string(r.ConnectionState), r.BusinessNumber, r.DefaultEmailAddress, r.ModifiedDate,
			r.CreatedDate, keywords, det,
			pos[byNameAsc][i], pos[byNameDesc][i], pos[byCreatedAsc][i], pos[byCreatedDesc][i], pos[byModifiedAsc][i], pos[byModifiedDesc][i],
		}, nil
	}))
	if err != nil {
		return fmt.Errorf("%s.suppliers: %w", at, err)
	}

	if err := copyTerms(ctx, tx, at, c.ID, rs, &pos); err != nil {
		return err
	}
	if err := copyContacts(ctx, tx, at, c.ID, rs); err != nil {
		return err
	}
	return copyAddresses(ctx, tx, at, c.ID, rs)
}

// terms returns the search terms of a supplier in byte order: the
// lower-cased name, legal business name, supplierId and keywords that are
// not empty, without duplicates and without a term that is a prefix of
// another (the longer term matches every prefix query the shorter one
// does). lcps[i] is the length of the common prefix of terms i-1 and i.
func terms(r *supplier.Record, dst []string, lcps []int32) ([]string, []int32) {
	dst = dst[:0]
	add := func(s string) {
		if s != "" {
			dst = append(dst, foldKey(s))
		}
	}
	add(r.Name)
	add(r.LegalBusinessName)
	add(r.SupplierID)
	for _, k := range r.Keywords {
		add(k)
	}
	slices.Sort(dst)
	kept := dst[:0]
	for i, t := range dst {
		if i+1 < len(dst) && strings.HasPrefix(dst[i+1], t) {
			continue // a duplicate, or a prefix of the next term
		}
		kept = append(kept, t)
	}
	lcps = lcps[:0]
	for i, t := range kept {
		n := 0
		if i > 0 {
			prev := kept[i-1]
			for n < len(prev) && n < len(t) && prev[n] == t[n] {
				n++
			}
		}
		lcps = append(lcps, int32(n))
	}
	return kept, lcps
}

func copyTerms(ctx context.Context, tx pgx.Tx, at, community string, rs []supplier.Record, pos *[numOrders][]int32) error {
	i, j := 0, 0
	var ts []string
	var lcps []int32
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"supplier_terms"}, termColumns, pgx.CopyFromFunc(func() ([]any, error) {
		for j == len(ts) {
			if i == len(rs) {
				return nil, nil
			}
			ts, lcps = terms(&rs[i], ts, lcps)
			i++
			j = 0
		}
		j++
		k := i - 1
		return []any{community, ts[j-1], rs[k].ID, rs[k].ModifiedDate, lcps[j-1],
			pos[byNameAsc][k], pos[byNameDesc][k], pos[byCreatedAsc][k], pos[byCreatedDesc][k], pos[byModifiedAsc][k], pos[byModifiedDesc][k],
		}, nil
	}))
	if err != nil {
		return fmt.Errorf("%s.suppliers: search terms: %w", at, err)
	}
	return nil
}

var termColumns = []string{"community_id", "term", "supplier_id", "modified_date", "lcp_prev",
	"pos_name_asc", "pos_name_desc", "pos_created_asc", "pos_created_desc", "pos_modified_asc", "pos_modified_desc"}

func copyContacts(ctx context.Context, tx pgx.Tx, at, community string, rs []supplier.Record) error {
	var rows [][]any
	for si := range rs {
		r := &rs[si]
		seen := make(map[uuid.UUID]bool, len(r.Contacts))
		for ki, ct := range r.Contacts {
			if seen[ct.ID] {
				return procure.Invalid(procure.SourceData, fmt.Sprintf("%s.suppliers[%d].contacts[%d].id", at, si, ki), "duplicate contact id "+ct.ID.String()+" within the supplier")
			}
			seen[ct.ID] = true
			doc, err := json.Marshal(ct)
			if err != nil {
				return fmt.Errorf("%s.suppliers[%d].contacts[%d]: %w", at, si, ki, err)
			}
			rows = append(rows, []any{community, r.ID, ct.ID, nullKey(ct.Name), doc})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"supplier_contacts"}, []string{"community_id", "supplier_id", "id", "name_key", "doc"}, pgx.CopyFromRows(rows))
	if err != nil {
		return fmt.Errorf("%s.suppliers: contacts: %w", at, err)
	}
	return nil
}

func copyAddresses(ctx context.Context, tx pgx.Tx, at, community string, rs []supplier.Record) error {
	var rows [][]any
	for si := range rs {
		r := &rs[si]
		seen := make(map[uuid.UUID]bool, len(r.RemittanceAddresses))
		for ai, a := range r.RemittanceAddresses {
			if seen[a.ID] {
				return procure.Invalid(procure.SourceData, fmt.Sprintf("%s.suppliers[%d].remittanceAddresses[%d].id", at, si, ai), "duplicate remittance address id "+a.ID.String()+" within the supplier")
			}
			seen[a.ID] = true
			doc, err := json.Marshal(a)
			if err != nil {
				return fmt.Errorf("%s.suppliers[%d].remittanceAddresses[%d]: %w", at, si, ai, err)
			}
			rows = append(rows, []any{community, r.ID, a.ID, nullKey(a.CompanyName), a.ModifiedDate, doc})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"remittance_addresses"}, []string{"community_id", "supplier_id", "id", "company_name_key", "modified_date", "doc"}, pgx.CopyFromRows(rows))
	if err != nil {
		return fmt.Errorf("%s.suppliers: remittance addresses: %w", at, err)
	}
	return nil
}

// sendBatch runs b and, when query i fails, returns what name(i, err)
// makes of the error.
func sendBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch, name func(i int, err error) error) error {
	if b.Len() == 0 {
		return nil
	}
	br := tx.SendBatch(ctx, b)
	for i := range b.Len() {
		if _, err := br.Exec(); err != nil {
			closeErr := br.Close()
			_ = closeErr // the batch has failed already; its first error is the one to report
			return name(i, err)
		}
	}
	return br.Close()
}

func importTokens(ctx context.Context, tx pgx.Tx, at string, c *datafile.Community) error {
	b := &pgx.Batch{}
	for _, t := range c.Tokens {
		h := auth.HashSecret(t.Token)
		scopes := t.Scopes
		if scopes == nil {
			scopes = []string{}
		}
		var expires any
		if t.Expires != nil {
			expires = *t.Expires
		}
		b.Queue(`INSERT INTO tokens (hash, community_id, scopes, expires, revoked) VALUES ($1, $2, $3, $4, $5)`,
			h[:], c.ID, scopes, expires, t.Revoked)
	}
	return sendBatch(ctx, tx, b, func(i int, err error) error {
		field := fmt.Sprintf("%s.tokens[%d].token", at, i)
		if uniqueViolation(err) != "" {
			// Never echo the token, nor its hash.
			return procure.Invalid(procure.SourceData, field, "the same token belongs to another community")
		}
		return fmt.Errorf("%s: %w", field, err)
	})
}

func importAccounts(ctx context.Context, tx pgx.Tx, at string, c *datafile.Community) error {
	b := &pgx.Batch{}
	type entry struct{ field string }
	var entries []entry
	for ai, a := range c.ServiceAccounts {
		aat := fmt.Sprintf("%s.serviceAccounts[%d]", at, ai)
		ips := make([]netip.Prefix, 0, len(a.AllowedIPs))
		for ii, s := range a.AllowedIPs {
			p, err := datafile.ParsePrefix(s)
			if err != nil {
				return procure.Invalid(procure.SourceData, fmt.Sprintf("%s.allowedIPs[%d]", aat, ii), "must be an IP address or CIDR")
			}
			ips = append(ips, p)
		}
		b.Queue(`INSERT INTO service_accounts (id, community_id, allowed_ips) VALUES ($1, $2, $3)`, a.ID, c.ID, ips)
		entries = append(entries, entry{aat + ".id"})
		for ki, k := range a.Keys {
			h := auth.HashSecret(k.Key)
			b.Queue(`INSERT INTO service_account_keys (account_id, ord, hash, active) VALUES ($1, $2, $3, $4)`, a.ID, ki, h[:], k.Active)
			entries = append(entries, entry{fmt.Sprintf("%s.keys[%d]", aat, ki)})
		}
	}
	return sendBatch(ctx, tx, b, func(i int, err error) error {
		if uniqueViolation(err) != "" {
			return procure.Invalid(procure.SourceData, entries[i].field, "a service account with this id belongs to another community")
		}
		return fmt.Errorf("%s: %w", entries[i].field, err)
	})
}

func importBudgets(ctx context.Context, tx pgx.Tx, at string, c *datafile.Community) error {
	if len(c.Budgets) == 0 {
		return nil
	}
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
	// numeric travels as text: exact, whatever its scale.
	_, err := tx.Exec(ctx, `INSERT INTO budgets (community_id, account, budget)
		SELECT $1, a, b::numeric FROM unnest($2::text[], $3::text[]) AS t(a, b)`, c.ID, accounts, amounts)
	if err != nil {
		return fmt.Errorf("%s.budgets: %w", at, err)
	}
	return nil
}

// importUsers seeds the community's users: a user whose id the community
// already holds is left as it is (the user API may have changed it since).
func importUsers(ctx context.Context, tx pgx.Tx, at string, c *datafile.Community) error {
	b := &pgx.Batch{}
	for _, u := range c.Users {
		row, err := userRow(c.ID, u)
		if err != nil {
			return err
		}
		// When the id exists in this community, nothing is inserted; when
		// it exists in another, the insert breaks users_pkey.
		b.Queue(`INSERT INTO users (`+userColumns+`)
			SELECT `+userPlaceholders+`
			WHERE NOT EXISTS (SELECT 1 FROM users WHERE id = $1 AND community_id = $2)`, row...)
	}
	return sendBatch(ctx, tx, b, func(i int, err error) error {
		uat := fmt.Sprintf("%s.users[%d]", at, i)
		switch uniqueViolation(err) {
		case "users_pkey":
			return procure.Invalid(procure.SourceData, uat+".id", "a user with this id exists in another community")
		case "users_community_username":
			return procure.Invalid(procure.SourceData, uat+".username", "taken by another user of the community")
		}
		return fmt.Errorf("%s: %w", uat, err)
	})
}
