package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

// ImportStream upserts the data file read from r (docs: datafile.md
// "Import") and returns how many entities of each kind the file held:
// keys "communities", "suppliers", "contacts", "remittanceAddresses",
// "tokens", "serviceAccounts", "users", "budgets", as pgstore's
// ImportStream does.
//
// A community the store does not hold is added whole, as AddCommunity
// adds it. For one it holds, every entity in the file is created or
// replaced, keeping the file's dates, and entities not in the file are
// left alone: name, region and auto-roles are replaced; suppliers are
// replaced with their keywords, and their contacts and remittance
// addresses upserted by id (one stored but not in the file is kept);
// tokens are upserted by secret, service accounts by id (allowlist
// replaced, keys upserted by secret), users by id, budgets by account.
// An entity equal to what is stored changes nothing, so importing a file
// twice changes nothing and stamps nothing. The community's modifiedDate
// high-water mark rises to the latest date imported, so later writes
// still stamp above every date a client may have seen.
//
// Two decisions beyond docs (where a file and a runtime change meet): an
// import never un-revokes a token nor reactivates a deactivated key - a
// leaked credential revoked through the admin API must not come back with
// an old file (the admin API can undo either on purpose); and a token, key,
// account or user id held by another community is a conflict
// (procure.ErrConflict) refused before the community is changed.
//
// The file is read with datafile.Stream; a community's suppliers are held
// until its entry ends (memstore keeps them in memory anyway). Each
// community is applied on its own: an error stops the import, and the
// communities before it stay imported (pgstore's import, one transaction,
// changes nothing on error).
func (s *Store) ImportStream(ctx context.Context, r io.Reader) (map[string]int, error) {
	im := &importer{s: s, ctx: ctx, counts: map[string]int{}}
	if err := datafile.Stream(r, im); err != nil {
		return nil, err
	}
	return im.counts, nil
}

// importer is the datafile.Handler of ImportStream.
type importer struct {
	s      *Store
	ctx    context.Context
	recs   []supplier.Record // of the community whose entry has not ended
	counts map[string]int
}

func (im *importer) Supplier(_, _ int, rec *supplier.Record) error {
	im.recs = append(im.recs, *rec)
	return nil
}

func (im *importer) Community(_ int, c *datafile.Community, _ int) error {
	if err := im.ctx.Err(); err != nil {
		return err
	}
	recs := im.recs
	im.recs = nil
	im.counts["communities"]++
	im.counts["suppliers"] += len(recs)
	for i := range recs {
		im.counts["contacts"] += len(recs[i].Contacts)
		im.counts["remittanceAddresses"] += len(recs[i].RemittanceAddresses)
	}
	im.counts["tokens"] += len(c.Tokens)
	im.counts["serviceAccounts"] += len(c.ServiceAccounts)
	im.counts["users"] += len(c.Users)
	im.counts["budgets"] += len(c.Budgets)
	if !im.s.hasCommunity(c.ID) {
		c.Suppliers = recs
		return im.s.AddCommunity(c)
	}
	return im.s.upsertCommunity(im.ctx, c, recs)
}

// upsertCommunity applies the file's entry c, with its suppliers recs, to
// a community the store holds.
func (s *Store) upsertCommunity(ctx context.Context, c *datafile.Community, recs []supplier.Record) error {
	if err := s.importConflicts(c); err != nil {
		return err
	}
	if _, err := s.PutCommunity(ctx, procure.Community{ID: c.ID, Name: c.Name, Region: string(c.Region), AutoRoles: c.AutoRoles}); err != nil {
		return err
	}
	if err := s.importSuppliers(c.ID, recs); err != nil {
		return err
	}
	s.importTokens(c)
	if err := s.importAccounts(ctx, c); err != nil {
		return err
	}
	if err := s.importUsers(ctx, c); err != nil {
		return err
	}
	return s.editBudgets(c.ID, func(m map[string]decimal.Decimal) error {
		for _, b := range c.Budgets {
			m[b.Account] = b.Budget
		}
		return nil
	})
}

// importConflicts refuses, before anything changes, a token, key, service
// account or user of c that another community holds.
func (s *Store) importConflicts(c *datafile.Community) error {
	at := func(kind string, i int) string { return fmt.Sprintf("communities[id %s].%s[%d]", c.ID, kind, i) }
	s.tokens.mu.RLock()
	for i, t := range c.Tokens {
		if cur, ok := s.tokens.byHash[auth.HashSecret(t.Token)]; ok && cur.Community != c.ID {
			s.tokens.mu.RUnlock()
			return fmt.Errorf("%s.token: the secret belongs to another community: %w", at("tokens", i), procure.ErrConflict)
		}
	}
	s.tokens.mu.RUnlock()
	s.accounts.mu.RLock()
	for i, a := range c.ServiceAccounts {
		if cur, ok := s.accounts.byID[a.ID]; ok && cur.Community != c.ID {
			s.accounts.mu.RUnlock()
			return fmt.Errorf("%s.id: the service account belongs to another community: %w", at("serviceAccounts", i), procure.ErrConflict)
		}
		for k, key := range a.Keys {
			if owner, ok := s.accounts.keyOwner[auth.HashSecret(key.Key)]; ok && owner != a.ID {
				s.accounts.mu.RUnlock()
				return fmt.Errorf("%s.keys[%d].key: the secret belongs to another service account: %w", at("serviceAccounts", i), k, procure.ErrConflict)
			}
		}
	}
	s.accounts.mu.RUnlock()
	s.users.mu.RLock()
	defer s.users.mu.RUnlock()
	for i, u := range c.Users {
		if e := s.users.byID[u.ID]; u.ID != "" && e != nil && e.community != c.ID {
			return fmt.Errorf("%s.id: the user id belongs to another community: %w", at("users", i), procure.ErrConflict)
		}
	}
	return nil
}

// importSuppliers replaces the suppliers of recs in community, keeping
// stored contacts and addresses the file does not name.
func (s *Store) importSuppliers(community string, recs []supplier.Record) error {
	if len(recs) == 0 {
		return nil
	}
	cs := s.suppliers.writable(community)
	cs.wmu.Lock()
	defer cs.wmu.Unlock()
	for i := range recs {
		r := &recs[i]
		old := cs.current(r.ID)
		if old != nil {
			r.Contacts = mergeByID(old.contacts, r.Contacts, func(c supplier.Contact) uuid.UUID { return c.ID })
			r.RemittanceAddresses = mergeByID(old.addrs, r.RemittanceAddresses, func(a supplier.RemittanceAddress) uuid.UUID { return a.ID })
		}
		rec := newSupplierRec(r, nil)
		if old != nil && sameRecord(old, &rec) {
			continue
		}
		if cs.hwSet {
			cs.hw = max(cs.hw, recMaxModified(&rec))
		}
		if err := cs.replace(r.ID, &rec); err != nil {
			return err
		}
	}
	return nil
}

// mergeByID returns stored's entries the file does not name, then the
// file's.
func mergeByID[T any](stored, file []T, id func(T) uuid.UUID) []T {
	named := make(map[uuid.UUID]bool, len(file))
	for _, f := range file {
		named[id(f)] = true
	}
	out := make([]T, 0, len(stored)+len(file))
	for _, st := range stored {
		if !named[id(st)] {
			out = append(out, st)
		}
	}
	return append(out, file...)
}

// sameRecord reports whether two stored records hold the same supplier,
// dates included.
func sameRecord(a, b *supplierRec) bool {
	if !sameDetail(&a.detail, &b.detail) || !slices.Equal(a.keywords, b.keywords) ||
		!sameDates(a.detail.ModifiedDate, b.detail.ModifiedDate, a.detail.CreatedDate, b.detail.CreatedDate) ||
		len(a.contacts) != len(b.contacts) || len(a.addrs) != len(b.addrs) {
		return false
	}
	if (a.detail.DefaultContact == nil) != (b.detail.DefaultContact == nil) ||
		a.detail.DefaultContact != nil && !sameContact(a.detail.DefaultContact, b.detail.DefaultContact, true) {
		return false
	}
	if (a.detail.DefaultRemittanceAddress == nil) != (b.detail.DefaultRemittanceAddress == nil) ||
		a.detail.DefaultRemittanceAddress != nil && !sameRemittance(a.detail.DefaultRemittanceAddress, b.detail.DefaultRemittanceAddress, true) {
		return false
	}
	for i := range a.contacts {
		if a.contacts[i].ID != b.contacts[i].ID || !sameContact(&a.contacts[i], &b.contacts[i], true) {
			return false
		}
	}
	for i := range a.addrs {
		if a.addrs[i].ID != b.addrs[i].ID || !sameRemittance(&a.addrs[i], &b.addrs[i], true) {
			return false
		}
	}
	return true
}

// importTokens upserts c's tokens by secret. An import never un-revokes.
func (s *Store) importTokens(c *datafile.Community) {
	x := &s.tokens
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, t := range c.Tokens {
		h := auth.HashSecret(t.Token)
		tok, ok := x.byHash[h]
		if !ok {
			tok = auth.Token{ID: auth.TokenID(h), Hash: h, Community: c.ID, CreatedAt: nowMicros()}
			x.byID[tok.ID] = h
		}
		tok.Scopes = slices.Clip(slices.Clone(t.Scopes))
		tok.Expires = timeOrZero(t.Expires)
		tok.Revoked = tok.Revoked || t.Revoked
		x.byHash[h] = tok
	}
}

// importAccounts upserts c's service accounts by id: the allowlist is
// replaced, keys are upserted by secret (a key stored but not in the file
// is kept). An import never reactivates a deactivated key.
func (s *Store) importAccounts(ctx context.Context, c *datafile.Community) error {
	built, err := s.accounts.build(c) // parsed allowlists, hashed keys
	if err != nil {
		return err
	}
	for _, a := range built {
		sa, err := s.PutServiceAccount(ctx, c.ID, a.ID, a.AllowedIPs)
		if err != nil {
			return err
		}
		for _, k := range a.Keys {
			j := slices.IndexFunc(sa.Keys, func(o auth.Key) bool { return o.Hash == k.Hash })
			switch {
			case j < 0:
				if _, err := s.AddKey(ctx, c.ID, a.ID, auth.Key{Hash: k.Hash, Active: k.Active}); err != nil {
					return err
				}
			case sa.Keys[j].Active && !k.Active:
				if _, err := s.SetKeyActive(ctx, c.ID, a.ID, sa.Keys[j].ID, false); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// importUsers upserts c's users by id, as the file has them (no
// auto-roles added: docs: users.md "Auto-roles").
func (s *Store) importUsers(ctx context.Context, c *datafile.Community) error {
	for _, u := range c.Users {
		if u.ID != "" {
			if cur, err := s.UserByID(ctx, c.ID, u.ID); err == nil {
				want := u
				want.Version = cur.Version
				if userEqual(cur, want) {
					continue
				}
				if _, err := s.UpdateUser(ctx, c.ID, u.ID, func(p *user.User) error {
					v := p.Version
					*p = u
					p.Version = v
					return nil
				}); err != nil {
					return err
				}
				continue
			} else if !errors.Is(err, user.ErrNotFound) {
				return err
			}
		}
		if _, err := s.CreateUser(ctx, c.ID, u); err != nil {
			return err
		}
	}
	return nil
}

// timeOrZero is *t, or the zero time for nil, in UTC at microseconds.
func timeOrZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// userEqual reports whether two users hold the same values, as their JSON
// (the form every reader sees) tells.
func userEqual(a, b user.User) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
