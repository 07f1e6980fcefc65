// Package importtest is the conformance suite of data-file imports
// (docs: datafile.md "Import"): every store that imports a data file runs
// it, so the stores cannot drift apart in what an import does.
//
// A store's tests call Run with a function that opens an empty store:
//
//	func TestImportConformance(t *testing.T) {
//		importtest.Run(t, func(tb testing.TB) importtest.Store { return memstore.New() })
//	}
//
// The suite imports a base file, then files that must fail - malformed in
// their second community, or in conflict with stored data (a username
// another user keeps, another community's token, service account, key or
// user id) - each after changing the first community, so that a partial
// import would show. A failure must store nothing: the store's whole state,
// read back through its read interfaces, is compared before and after.
// Importing the same file twice must change nothing either, and every
// import reports what it created, updated and found unchanged, kind by
// kind, the same on every store.
package importtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

// Store is what the suite needs of a store: the import and the read
// interfaces through which it compares the store's state.
type Store interface {
	ImportStream(ctx context.Context, r io.Reader) (datafile.ImportCounts, error)
	procure.CommunityStore
	supplier.Store
	auth.TokenStore
	auth.KeyStore
	user.Store
	BudgetLoader(community string) budget.TableLoader
}

// The ids and secrets of the files; state reads exactly these.
var (
	communities = []string{"alpha", "beta", "gamma"}
	tokens      = []string{"tok-alpha", "tok-beta", "tok-new"}
	accounts    = []string{"sa-alpha", "sa-beta", "sa-new"}
	userIDs     = []string{"u-alpha-1", "u-alpha-2", "u-beta-1", "u-new"}
	usernames   = []string{"ann", "bob", "cat", "newbie"}
)

// base is the file every case starts from.
const base = `{"communities": [
 {"id": "alpha", "name": "Alpha", "region": "NZ", "autoRoles": ["EMPLOYEE"],
  "tokens": [{"token": "tok-alpha", "scopes": ["suppliers:read"]}],
  "serviceAccounts": [{"id": "sa-alpha", "keys": [{"key": "key-alpha", "active": true}], "allowedIPs": ["192.0.2.0/24"]}],
  "users": [{"id": "u-alpha-1", "username": "ann", "enabled": true}, {"id": "u-alpha-2", "username": "bob", "enabled": true}],
  "budgets": [{"account": "6100", "budget": "100.00"}],
  "suppliers": [{"id": "a0000000-0000-4000-8000-000000000001", "name": "Acme", "profileType": "COMPANY",
    "modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2025-01-01T00:00:00Z",
    "contacts": [{"id": "a0000000-0000-4000-8000-0000000000c1", "name": "Ann",
      "modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2025-01-01T00:00:00Z"}]}]},
 {"id": "beta", "name": "Beta", "region": "AU",
  "tokens": [{"token": "tok-beta", "scopes": ["suppliers:read"]}],
  "serviceAccounts": [{"id": "sa-beta", "keys": [{"key": "key-beta", "active": true}]}],
  "users": [{"id": "u-beta-1", "username": "cat", "enabled": true}],
  "budgets": [{"account": "7100", "budget": "5"}]}
]}`

// alphaChanged is the first community of a failing file: renamed, with a
// new supplier, a new token, a new user, a changed budget.
const alphaChanged = `{"id": "alpha", "name": "Alpha Renamed", "region": "NZ",
  "tokens": [{"token": "tok-new", "scopes": ["suppliers:read"]}],
  "users": [{"id": "u-alpha-1", "username": "ann", "firstName": "Changed", "enabled": true}, {"id": "u-new", "username": "newbie"}],
  "budgets": [{"account": "6100", "budget": "999"}],
  "suppliers": [{"id": "a0000000-0000-4000-8000-000000000002", "name": "Brand New", "profileType": "COMPANY",
    "modifiedDate": "2026-02-01T00:00:00Z", "createdDate": "2026-02-01T00:00:00Z"}]}`

// Run runs the suite on stores that open returns, empty and each used by
// one subtest.
func Run(t *testing.T, open func(tb testing.TB) Store) {
	ctx := context.Background()
	tests := []struct {
		name string
		file string
		// want is procure.ErrInvalid or procure.ErrConflict; field the
		// entry the error must start with.
		want  error
		field string
	}{
		{"malformed second community", `{"communities": [` + alphaChanged + `,
			{"id": "gamma", "region": "EU"}]}`, procure.ErrInvalid, "communities[1].region"},
		{"bad JSON in the second community", `{"communities": [` + alphaChanged + `,
			{"id": "gamma", "region": "NZ", "users": [{"id": "x" "username": "y"}]}]}`, procure.ErrInvalid, "line 7:58: malformed JSON"},
		{"username another user keeps", `{"communities": [{"id": "alpha", "name": "Alpha Renamed", "region": "NZ",
			"tokens": [{"token": "tok-new", "scopes": ["suppliers:read"]}],
			"suppliers": [{"id": "a0000000-0000-4000-8000-000000000002", "name": "Brand New", "profileType": "COMPANY",
			  "modifiedDate": "2026-02-01T00:00:00Z", "createdDate": "2026-02-01T00:00:00Z"}],
			"users": [{"id": "u-alpha-1", "username": "ann"}, {"id": "u-new", "username": "BOB"}]}]}`,
			procure.ErrConflict, "communities[0].users[1].username"},
		// Rules of supplier.Record.Validate that only PostgreSQL used to
		// keep: both stores refuse the file alike.
		{"NUL in a supplier's name", `{"communities": [` + alphaChanged + `,
			{"id": "gamma", "region": "NZ", "suppliers": [{"id": "c0000000-0000-4000-8000-000000000001",
			  "name": "nul\u0000here", "profileType": "COMPANY",
			  "modifiedDate": "2026-02-01T00:00:00Z", "createdDate": "2026-02-01T00:00:00Z"}]}]}`,
			procure.ErrInvalid, "communities[1].suppliers[0].name"},
		{"a contact id twice in a supplier", `{"communities": [` + alphaChanged + `,
			{"id": "gamma", "region": "NZ", "suppliers": [{"id": "c0000000-0000-4000-8000-000000000001",
			  "profileType": "COMPANY", "modifiedDate": "2026-02-01T00:00:00Z", "createdDate": "2026-02-01T00:00:00Z",
			  "contacts": [
			    {"id": "c0000000-0000-4000-8000-0000000000c1", "name": "A", "modifiedDate": "2026-02-01T00:00:00Z", "createdDate": "2026-02-01T00:00:00Z"},
			    {"id": "c0000000-0000-4000-8000-0000000000c1", "name": "B", "modifiedDate": "2026-02-01T00:00:00Z", "createdDate": "2026-02-01T00:00:00Z"}]}]}]}`,
			procure.ErrInvalid, "communities[1].suppliers[0].contacts[1].id"},
		{"another community's token", `{"communities": [` + alphaChanged + `,
			{"id": "gamma", "region": "NZ", "tokens": [{"token": "tok-beta", "scopes": ["suppliers:read"]}]}]}`,
			procure.ErrConflict, "communities[1].tokens[0].token"},
		{"another community's token in a community it holds", `{"communities": [` + alphaChanged + `,
			{"id": "beta", "name": "Beta", "region": "AU", "tokens": [{"token": "tok-alpha", "scopes": ["suppliers:read"]}]}]}`,
			procure.ErrConflict, "communities[1].tokens[0].token"},
		{"another community's service account", `{"communities": [` + alphaChanged + `,
			{"id": "gamma", "region": "NZ", "serviceAccounts": [{"id": "sa-beta", "keys": []}]}]}`,
			procure.ErrConflict, "communities[1].serviceAccounts[0].id"},
		{"another account's key", `{"communities": [` + alphaChanged + `,
			{"id": "gamma", "region": "NZ", "serviceAccounts": [{"id": "sa-new", "keys": [{"key": "key-beta", "active": true}]}]}]}`,
			procure.ErrConflict, "communities[1].serviceAccounts[0].keys[0].key"},
		{"another community's user id", `{"communities": [` + alphaChanged + `,
			{"id": "gamma", "region": "NZ", "users": [{"id": "u-beta-1", "username": "dan"}]}]}`,
			procure.ErrConflict, "communities[1].users[0].id"},
		{"another community's user id in a community it holds", `{"communities": [` + alphaChanged + `,
			{"id": "beta", "name": "Beta", "region": "AU", "users": [{"id": "u-alpha-2", "username": "bob"}]}]}`,
			procure.ErrConflict, "communities[1].users[0].id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			if _, err := s.ImportStream(ctx, strings.NewReader(base)); err != nil {
				t.Fatalf("importing the base file: %v", err)
			}
			before := State(t, s)
			_, err := s.ImportStream(ctx, strings.NewReader(tt.file))
			other := procure.ErrConflict
			if tt.want == procure.ErrConflict {
				other = procure.ErrInvalid
			}
			if !errors.Is(err, tt.want) || errors.Is(err, other) || !strings.HasPrefix(err.Error(), tt.field) {
				t.Fatalf("ImportStream error = %v; want one matching %v (and not %v) that starts with %s", err, tt.want, other, tt.field)
			}
			if strings.Contains(err.Error(), "tok-") || strings.Contains(err.Error(), "key-") {
				t.Errorf("the error shows a secret: %v", err)
			}
			if diff := cmp.Diff(before, State(t, s)); diff != "" {
				t.Fatalf("a failed import changed the store (-before +after):\n%s", diff)
			}
		})
	}
	t.Run("counts what each import did", func(t *testing.T) { runCounts(t, open) })
	t.Run("users who swap usernames", func(t *testing.T) {
		s := open(t)
		if _, err := s.ImportStream(ctx, strings.NewReader(base)); err != nil {
			t.Fatalf("importing the base file: %v", err)
		}
		swap := `{"communities": [{"id": "alpha", "name": "Alpha", "region": "NZ",
			"users": [{"id": "u-alpha-1", "username": "BOB", "enabled": true}, {"id": "u-alpha-2", "username": "ann", "enabled": true}]}]}`
		counts, err := s.ImportStream(ctx, strings.NewReader(swap))
		if err != nil {
			t.Fatalf("importing the swap: %v", err)
		}
		if got, want := counts[datafile.KindUsers], (datafile.Outcome{Updated: 2}); got != want {
			t.Errorf("users of the swap: %+v, want %+v", got, want)
		}
		for id, want := range map[string]string{"u-alpha-1": "BOB", "u-alpha-2": "ann"} {
			if u, err := s.UserByID(ctx, "alpha", id); err != nil || u.Username != want || u.Version != 2 {
				t.Errorf("user %s after the swap: %+v, %v; want username %s at version 2", id, u, err, want)
			}
			if u, err := s.UserByUsername(ctx, "alpha", want); err != nil || u.ID != id {
				t.Errorf("username %s after the swap: %+v, %v; want user %s", want, u, err, id)
			}
		}
	})
	t.Run("importing a file twice changes nothing", func(t *testing.T) {
		s := open(t)
		file := `{"communities": [` + alphaChanged + `, {"id": "gamma", "region": "US"}]}`
		for _, f := range []string{base, file} {
			if _, err := s.ImportStream(ctx, strings.NewReader(f)); err != nil {
				t.Fatalf("import: %v", err)
			}
		}
		before := State(t, s)
		counts, err := s.ImportStream(ctx, strings.NewReader(file))
		if err != nil {
			t.Fatalf("the second import: %v", err)
		}
		want := outcomes(map[string][3]int{"communities": {0, 0, 2}, "suppliers": {0, 0, 1},
			"tokens": {0, 0, 1}, "users": {0, 0, 2}, "budgets": {0, 0, 1}})
		if diff := cmp.Diff(want, counts); diff != "" {
			t.Errorf("counts (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(before, State(t, s)); diff != "" {
			t.Fatalf("the second import changed the store (-before +after):\n%s", diff)
		}
		// The upsert kept what the file does not name and took what it
		// does.
		if u, err := s.UserByID(ctx, "alpha", "u-alpha-2"); err != nil || u.Username != "bob" {
			t.Errorf("alpha's user not in the second file: %+v, %v; want it kept", u, err)
		}
		if c, err := s.Community(ctx, "alpha"); err != nil || c.Name != "Alpha Renamed" {
			t.Errorf("alpha after the import: %+v, %v; want it renamed", c, err)
		}
	})
}

// outcomes is ImportCounts from {created, updated, unchanged} by kind;
// the kinds not given are zero.
func outcomes(m map[string][3]int) datafile.ImportCounts {
	c := datafile.NewImportCounts()
	for k, n := range m {
		c[k] = datafile.Outcome{Created: n[0], Updated: n[1], Unchanged: n[2]}
	}
	return c
}

// changedFile changes base in every way an entity of each kind can
// change, beside entities it leaves as they are and new ones.
const changedFile = `{"communities": [
 {"id": "alpha", "name": "Alpha Renamed", "region": "NZ", "autoRoles": ["EMPLOYEE"],
  "tokens": [{"token": "tok-alpha", "scopes": ["suppliers:read", "extra"]}, {"token": "tok-new", "scopes": ["suppliers:read"]}],
  "serviceAccounts": [{"id": "sa-alpha", "keys": [{"key": "key-alpha", "active": true}, {"key": "key-alpha-2", "active": true}], "allowedIPs": ["192.0.2.0/24"]}],
  "users": [{"id": "u-alpha-1", "username": "ann", "firstName": "Changed", "enabled": true},
    {"id": "u-alpha-2", "username": "bob", "enabled": true}, {"id": "u-new", "username": "newbie"}],
  "budgets": [{"account": "6100", "budget": "100"}, {"account": "6200", "budget": "7"}],
  "suppliers": [{"id": "a0000000-0000-4000-8000-000000000001", "name": "Acme", "profileType": "COMPANY",
    "modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2025-01-01T00:00:00Z",
    "contacts": [{"id": "a0000000-0000-4000-8000-0000000000c1", "name": "Ann Changed",
      "modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2025-01-01T00:00:00Z"},
      {"id": "a0000000-0000-4000-8000-0000000000c2", "name": "Cat",
      "modifiedDate": "2026-01-02T00:00:00Z", "createdDate": "2026-01-02T00:00:00Z"}],
    "remittanceAddresses": [{"id": "a0000000-0000-4000-8000-0000000000d1", "companyName": "Acme Pay",
      "address": {"line1": "1 Queen St", "city": "Auckland", "country": "NZ"},
      "modifiedDate": "2026-01-02T00:00:00Z", "createdDate": "2026-01-02T00:00:00Z"}]},
   {"id": "a0000000-0000-4000-8000-000000000002", "name": "Brand New", "profileType": "COMPANY",
    "modifiedDate": "2026-02-01T00:00:00Z", "createdDate": "2026-02-01T00:00:00Z"}]},
 {"id": "beta", "name": "Beta", "region": "AU",
  "tokens": [{"token": "tok-beta", "scopes": ["suppliers:read"]}],
  "serviceAccounts": [{"id": "sa-beta", "keys": [{"key": "key-beta", "active": false}]}],
  "users": [{"id": "u-beta-1", "username": "cat", "enabled": true}],
  "budgets": [{"account": "7100", "budget": "6"}]},
 {"id": "gamma", "region": "US", "serviceAccounts": [{"id": "sa-new", "keys": []}]}
]}`

// runCounts checks what imports report they did: the base file into an
// empty store (all created), a file changing it (each kind created,
// updated and unchanged as changedFile has them), and that file again
// (all unchanged).
func runCounts(t *testing.T, open func(tb testing.TB) Store) {
	ctx := context.Background()
	s := open(t)
	for _, step := range []struct {
		name, file string
		want       map[string][3]int // {created, updated, unchanged}
	}{
		{"the base file into an empty store", base, map[string][3]int{
			"communities": {2, 0, 0}, "suppliers": {1, 0, 0}, "contacts": {1, 0, 0}, "tokens": {2, 0, 0},
			"serviceAccounts": {2, 0, 0}, "users": {3, 0, 0}, "budgets": {2, 0, 0}}},
		{"a file that changes it", changedFile, map[string][3]int{
			// alpha renamed, beta as it was, gamma new.
			"communities": {1, 1, 1},
			// Acme as it was (its contacts changed: they count on their
			// own), Brand New new.
			"suppliers": {1, 0, 1},
			// Ann renamed, Cat new; the address new.
			"contacts": {1, 1, 0}, "remittanceAddresses": {1, 0, 0},
			// tok-alpha's scopes changed, tok-beta as it was.
			"tokens": {1, 1, 1},
			// sa-alpha has a new key, sa-beta's key deactivated.
			"serviceAccounts": {1, 2, 0},
			"users":           {1, 1, 2},
			// 6100 at 100 is 100.00 as a number; 7100 changed.
			"budgets": {1, 1, 1}}},
		{"the same file again", changedFile, map[string][3]int{
			"communities": {0, 0, 3}, "suppliers": {0, 0, 2}, "contacts": {0, 0, 2}, "remittanceAddresses": {0, 0, 1},
			"tokens": {0, 0, 3}, "serviceAccounts": {0, 0, 3}, "users": {0, 0, 4}, "budgets": {0, 0, 3}}},
	} {
		before := State(t, s)
		counts, err := s.ImportStream(ctx, strings.NewReader(step.file))
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if diff := cmp.Diff(outcomes(step.want), counts); diff != "" {
			t.Errorf("%s: counts (-want +got):\n%s", step.name, diff)
		}
		if sum := counts.Sum(); sum.Created+sum.Updated == 0 {
			if diff := cmp.Diff(before, State(t, s)); diff != "" {
				t.Errorf("%s: nothing created or updated, yet the store changed (-before +after):\n%s", step.name, diff)
			}
		}
	}
	if u, err := s.UserByID(ctx, "alpha", "u-alpha-1"); err != nil || u.FirstName != "Changed" {
		t.Errorf("the updated user: %+v, %v", u, err)
	}
}

// State reads everything the suite's files can touch through the store's
// read interfaces, as text keyed by what it is, so two states compare with
// cmp.Diff. Times a store sets on its own (creation, last use) are left
// out; everything a file gives is in.
func State(tb testing.TB, s Store) map[string]string {
	tb.Helper()
	ctx := context.Background()
	out := map[string]string{}
	put := func(key string, v any, err error) {
		if err != nil {
			out[key] = "error: " + errKind(err)
			return
		}
		b, jerr := json.Marshal(v)
		if jerr != nil {
			tb.Fatalf("%s: %v", key, jerr)
		}
		out[key] = string(b)
	}
	for _, c := range communities {
		com, err := s.Community(ctx, c)
		put("community "+c, com, err)
		page, err := s.ListSuppliers(ctx, c, supplier.ListQuery{Page: paging.Request{Size: 100}})
		put("suppliers of "+c, page, err)
		for _, sum := range page.Content {
			d, err := s.Supplier(ctx, c, sum.ID)
			put("supplier "+sum.ID.String(), d, err)
			cs, err := s.ListContacts(ctx, c, sum.ID, paging.Request{Size: 100})
			put("contacts of "+sum.ID.String(), cs, err)
			as, err := s.ListRemittanceAddresses(ctx, c, sum.ID, supplier.AddressQuery{Page: paging.Request{Size: 100}})
			put("addresses of "+sum.ID.String(), as, err)
		}
		for _, id := range userIDs {
			u, err := s.UserByID(ctx, c, id)
			put("user "+c+"/"+id, u, err)
		}
		for _, name := range usernames {
			u, err := s.UserByUsername(ctx, c, name)
			put("username "+c+"/"+name, u, err)
		}
		t, err := s.BudgetLoader(c)(ctx)
		var rows map[string]string
		if err == nil {
			rows = map[string]string{}
			for k, v := range t.Rows() {
				rows[k] = v.String()
			}
		}
		put("budgets of "+c, rows, err)
	}
	for _, secret := range tokens {
		tok, err := s.TokenByHash(ctx, auth.HashSecret(secret))
		put("token "+secret, struct {
			ID, Community string
			Scopes        []string
			Expires       string
			Revoked       bool
		}{tok.ID, tok.Community, tok.Scopes, tok.Expires.String(), tok.Revoked}, err)
	}
	for _, id := range accounts {
		a, err := s.ServiceAccount(ctx, id)
		type key struct {
			ID, Hash string
			Active   bool
		}
		var keys []key
		for _, k := range a.Keys {
			keys = append(keys, key{k.ID, fmt.Sprintf("%x", k.Hash), k.Active})
		}
		ips := make([]string, len(a.AllowedIPs))
		for i, p := range a.AllowedIPs {
			ips[i] = p.String()
		}
		put("account "+id, struct {
			Community  string
			AllowedIPs []string
			Keys       []key
		}{a.Community, ips, keys}, err)
	}
	return out
}

// errKind names an error by the sentinel it matches, so that two stores'
// wordings of "not found" compare equal.
func errKind(err error) string {
	for _, k := range []struct {
		err  error
		name string
	}{
		{procure.ErrUnknownCommunity, "unknown community"},
		{supplier.ErrNotFound, "supplier not found"},
		{user.ErrNotFound, "user not found"},
		{auth.ErrNotFound, "credential not found"},
		{auth.ErrUnknown, "unknown credential"},
	} {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return err.Error()
}

// UserFile returns a data file of one community, id "big", with n users
// ("u0", "user0", ...), generated as it is read: a file of any size
// without holding it, to measure what an import holds.
func UserFile(n int) io.Reader {
	return &userFile{n: n, pending: []byte(`{"communities": [{"id": "big", "name": "Big", "region": "NZ", "users": [`)}
}

type userFile struct {
	n, done int
	pending []byte
	ended   bool
}

func (f *userFile) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		switch {
		case f.done < f.n:
			sep := ","
			if f.done == 0 {
				sep = ""
			}
			f.pending = fmt.Appendf(f.pending, `%s{"id": "u%d", "username": "user%d", "firstName": "First", "lastName": "Last",
  "email": "user%d@example.com", "enabled": true, "roles": [{"code": "EMPLOYEE"}, {"code": "BUYER"}]}`, sep, f.done, f.done, f.done)
			f.done++
		case !f.ended:
			f.pending, f.ended = []byte("]}]}"), true
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}
