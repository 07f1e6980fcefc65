package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/supplierindex"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

// ImportStream upserts the data file read from r (docs: datafile.md
// "Import") and returns what it did with the entities of each kind the
// file held - how many it created, updated, and found unchanged - as
// pgstore's ImportStream does.
//
// A community the store does not hold is added whole, as a load adds it.
// For one it holds, every entity in the file is created or
// replaced, keeping the file's dates, and entities not in the file are
// left alone: name, region and auto-roles are replaced; suppliers are
// replaced with their keywords, and their contacts and remittance
// addresses upserted by id (one stored but not in the file is kept);
// tokens are upserted by secret, service accounts by id (allowlist
// replaced, keys upserted by secret), users by id, budgets by account.
// An entity equal to what is stored changes nothing, so importing a file
// twice changes nothing and stamps nothing. The community's modifiedDate
// high-water mark rises to the latest date imported, so later writes
// still stamp above every date a client may have seen. An import never
// un-revokes a token nor reactivates a deactivated key.
//
// The import is all or nothing, as pgstore's is: the whole file is read
// and checked first (an error matching procure.ErrInvalid names the
// entry and, for malformed JSON, the line); then, holding the locks of
// every part of the store that the file touches, every conflict with
// stored data is checked - a token, key, service account or user id held
// by another community, a username another user of the community keeps -
// and reported as procure.ErrConflict naming the entry, before anything
// changes; only then is the file applied, under the same locks, so no
// write of another caller slips in between. Readers wait for the apply to
// end, but for the suppliers of a community the store held: they are
// replaced last, one by one (each supplier whole), under the community's
// supplier write lock only, so that a large file does not stall the reads
// of every other community.
func (s *Store) ImportStream(ctx context.Context, r io.Reader) (counts datafile.ImportCounts, err error) {
	r, done := s.metrics.imports.Start(r, 0)
	defer func() { done(err) }()
	im := &importer{}
	if err := datafile.Stream(r, im); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	counts = datafile.NewImportCounts()
	if err := s.importAll(im.staged, counts); err != nil {
		return nil, err
	}
	return counts, nil
}

// importer is the datafile.Handler of ImportStream: it stages the file
// (memstore holds every entity in memory anyway).
type importer struct {
	staged []*staged
	recs   []supplier.Record // of the community whose entry has not ended
}

// staged is one community of the file, with what can be prepared before
// the store's locks are taken.
type staged struct {
	ci   int
	c    *datafile.Community
	recs []supplier.Record
	at   string // "communities[ci]"

	// A new community (the store did not hold it when the import began):
	ix  *supplierindex.Index
	tok newTokens
	us  newUsers
	acc []auth.ServiceAccount
	bt  *budget.Table

	// A community the store holds:
	cs      *comSuppliers // nil when the file has no supplier for it
	roles   []string
	table   *budget.Table    // computed under the lock, by the check
	budgets datafile.Outcome // what the file's budgets change, found by the check
}

func (im *importer) Supplier(_, _ int, rec *supplier.Record) error {
	im.recs = append(im.recs, *rec)
	return nil
}

func (im *importer) Community(ci int, c *datafile.Community, _ int) error {
	recs := im.recs
	im.recs = nil
	im.staged = append(im.staged, &staged{ci: ci, c: c, recs: recs, at: fmt.Sprintf("communities[%d]", ci)})
	return nil
}

// importAll applies the staged communities all or nothing (ImportStream),
// adding to counts what it did.
func (s *Store) importAll(file []*staged, counts datafile.ImportCounts) error {
	// Prepare what needs no lock: the parts of new communities as
	// a load builds them, the accounts and auto-roles of the others.
	var held []*staged
	for _, st := range file {
		c := st.c
		if !s.hasCommunity(c.ID) {
			c.Suppliers = st.recs
			if err := st.build(s); err != nil {
				return err
			}
			continue
		}
		roles, err := checkAutoRoles(c.AutoRoles)
		if err != nil {
			return fmt.Errorf("%s.autoRoles: %w", st.at, err)
		}
		st.roles = roles
		if st.acc, err = s.accounts.build(c); err != nil {
			return fmt.Errorf("%s.%w", st.at, err)
		}
		if len(st.recs) > 0 {
			st.cs = s.suppliers.writable(c.ID)
			held = append(held, st)
		}
	}
	// Lock order: the supplier write locks of the communities (by
	// community id, so that two imports cannot deadlock; a writer holds
	// only its own), then every part's lock in the order add takes them.
	slices.SortFunc(held, func(a, b *staged) int { return strings.Compare(a.c.ID, b.c.ID) })
	for _, st := range held {
		cs := st.cs
		cs.wmu.Lock()
		defer cs.wmu.Unlock()
	}
	if err := s.importLocked(file, counts); err != nil {
		return err
	}
	// The suppliers of the communities the store held go last, outside
	// the store-wide locks (a large file must not stall every other
	// community's reads while they are placed), still under their
	// communities' write locks: nothing can fail any more, and no other
	// write of those suppliers comes between.
	for _, st := range held {
		importSuppliers(st.cs, st.recs, counts)
	}
	return nil
}

// importLocked checks every community of the file for conflicts and, when
// none has any, applies everything but the suppliers of communities the
// store held, under every part's lock.
func (s *Store) importLocked(file []*staged, counts datafile.ImportCounts) error {
	defer s.lockAll()()
	for _, st := range file {
		if err := s.importCheck(st); err != nil {
			return err
		}
	}
	// Nothing below fails.
	for _, st := range file {
		s.importApply(st, counts)
	}
	return nil
}

// build prepares a community the store does not hold, as a load
// does.
func (st *staged) build(s *Store) error {
	var err error
	// The suppliers are the import's own (datafile.Stream hands them
	// over, in normal form): the index takes them as they are.
	if st.ix, err = supplierindex.New(st.c.Suppliers); err != nil {
		return fmt.Errorf("%s.suppliers: %w", st.at, err)
	}
	if st.tok, err = s.tokens.build(st.c); err != nil {
		return fmt.Errorf("%s.%w", st.at, err)
	}
	// The users are the import's own (datafile.Stream hands them over):
	// taken as they are rather than copied as users.build copies a
	// caller's, which would hold a community's users twice.
	roles, err := checkAutoRoles(st.c.AutoRoles)
	if err != nil {
		return fmt.Errorf("%s.autoRoles: %w", st.at, err)
	}
	for i := range st.c.Users {
		st.c.Users[i].Version = 1 // user.Store: a loaded user is at version 1
	}
	st.us = newUsers{community: st.c.ID, users: st.c.Users, roles: roles}
	if st.acc, err = s.accounts.build(st.c); err != nil {
		return fmt.Errorf("%s.%w", st.at, err)
	}
	if st.bt, err = s.budgets.build(st.c); err != nil {
		return fmt.Errorf("%s.%w", st.at, err)
	}
	return nil
}

// isNew reports whether st is a community the store did not hold.
func (st *staged) isNew() bool { return st.ix != nil }

// importCheck refuses st's conflicts with what the store holds; every
// part's lock is held.
func (s *Store) importCheck(st *staged) error {
	c, at := st.c, st.at
	conflict := func(field, why string) error {
		return fmt.Errorf("%s.%s: %s: %w", at, field, why, procure.ErrConflict)
	}
	if _, ok := s.communities.byID[c.ID]; ok == st.isNew() {
		// Created by another caller since the import began.
		return conflict("id", "the community was created while the file was read; import it again")
	}
	for i, t := range c.Tokens {
		if cur, ok := s.tokens.byHash[auth.HashSecret(t.Token)]; ok && cur.Community != c.ID {
			// Never echo the secret.
			return conflict(fmt.Sprintf("tokens[%d].token", i), "the same token belongs to another community")
		}
	}
	for i, a := range st.acc {
		if cur, ok := s.accounts.byID[a.ID]; ok && cur.Community != c.ID {
			return conflict(fmt.Sprintf("serviceAccounts[%d].id", i), "a service account with this id belongs to another community")
		}
		for k, key := range a.Keys {
			if owner, ok := s.accounts.keyOwner[key.Hash]; ok && owner != a.ID {
				return conflict(fmt.Sprintf("serviceAccounts[%d].keys[%d].key", i, k), "the secret belongs to another service account")
			}
		}
	}
	names := s.users.byName[c.ID]
	inFile := make(map[string]string, len(c.Users)) // id -> username key in the file
	for _, u := range c.Users {
		inFile[u.ID] = user.UsernameKey(u.Username)
	}
	for i, u := range c.Users {
		if e := s.users.byID[u.ID]; e != nil && e.community != c.ID {
			return conflict(fmt.Sprintf("users[%d].id", i), "a user with this id exists in another community")
		}
		// The username is free once the file is applied unless a stored
		// user keeps it: one the file does not rename.
		key := inFile[u.ID]
		if holder := names[key]; holder != nil && holder.u.ID != u.ID {
			if newKey, renamed := inFile[holder.u.ID]; !renamed || newKey == key {
				return conflict(fmt.Sprintf("users[%d].username", i), "taken by another user of the community")
			}
		}
	}
	if !st.isNew() {
		rows := map[string]decimal.Decimal{}
		if t := s.budgets.byCommunity[c.ID]; t != nil {
			rows = t.Rows()
		}
		for _, b := range c.Budgets {
			account := strings.TrimSpace(b.Account)
			old, ok := rows[account]
			switch {
			case !ok:
				st.budgets.Created++
			case !old.Equal(b.Budget):
				st.budgets.Updated++
			default:
				st.budgets.Unchanged++
			}
			rows[account] = b.Budget
		}
		t, err := budget.NewTable(rows)
		if err != nil {
			return fmt.Errorf("%s.budgets: %w", at, err)
		}
		st.table = t
	}
	return nil
}

// importApply applies st, checked by importCheck, adding to counts what
// it did (but for the suppliers of a community the store held, which
// importSuppliers counts); every lock is held.
func (s *Store) importApply(st *staged, counts datafile.ImportCounts) {
	c := st.c
	if st.isNew() {
		created := func(kind string, n int) { counts.Add(kind, datafile.Outcome{Created: n}) }
		created(datafile.KindCommunities, 1)
		created(datafile.KindSuppliers, len(c.Suppliers))
		for i := range c.Suppliers {
			created(datafile.KindContacts, len(c.Suppliers[i].Contacts))
			created(datafile.KindRemittanceAddresses, len(c.Suppliers[i].RemittanceAddresses))
		}
		created(datafile.KindTokens, len(c.Tokens))
		created(datafile.KindServiceAccounts, len(st.acc))
		created(datafile.KindUsers, len(c.Users))
		created(datafile.KindBudgets, len(c.Budgets))
		s.communities.publish(fromFile(c))
		s.suppliers.publish(c.ID, st.ix)
		s.tokens.publish(st.tok)
		s.users.publish(st.us)
		s.accounts.publish(st.acc)
		s.budgets.publish(c.ID, st.bt)
		return
	}
	com := procure.Community{ID: c.ID, Name: c.Name, Region: string(c.Region)}
	if old := s.communities.byID[c.ID]; old.Name == com.Name && old.Region == com.Region && slices.Equal(s.users.autoRoles[c.ID], st.roles) {
		counts.Add(datafile.KindCommunities, datafile.Outcome{Unchanged: 1})
	} else {
		counts.Add(datafile.KindCommunities, datafile.Outcome{Updated: 1})
	}
	s.communities.publish(com)
	if len(st.roles) == 0 {
		delete(s.users.autoRoles, c.ID)
	} else {
		s.users.autoRoles[c.ID] = st.roles
	}
	counts.Add(datafile.KindTokens, s.importTokens(c))
	counts.Add(datafile.KindServiceAccounts, s.importAccounts(st.acc))
	counts.Add(datafile.KindUsers, s.importUsers(c))
	counts.Add(datafile.KindBudgets, st.budgets)
	s.budgets.byCommunity[c.ID] = st.table
}

// importSuppliers replaces the suppliers of recs in the community cs,
// keeping stored contacts and addresses the file does not name, and adds
// to counts what it did; cs.wmu is held.
func importSuppliers(cs *comSuppliers, recs []supplier.Record, counts datafile.ImportCounts) {
	var sups, contacts, addrs datafile.Outcome
	for i := range recs {
		r := &recs[i]
		old, exists := cs.ix.Record(r.ID)
		if !exists {
			sups.Created++
			contacts.Created += len(r.Contacts)
			addrs.Created += len(r.RemittanceAddresses)
			continue
		}
		// Each counts on its own: the supplier by its own fields, each
		// contact and address of the file by its.
		if old.Detail.Equal(&r.Detail) && slices.Equal(old.Keywords, r.Keywords) {
			sups.Unchanged++
		} else {
			sups.Updated++
		}
		contacts = addOutcomes(contacts, ids(r.Contacts, contactID), old.Contacts, r.Contacts, contactID, (*supplier.Contact).Equal)
		addrs = addOutcomes(addrs, ids(r.RemittanceAddresses, addrID), old.RemittanceAddresses, r.RemittanceAddresses, addrID, (*supplier.RemittanceAddress).Equal)
		r.Contacts = mergeByID(old.Contacts, r.Contacts, contactID)
		r.RemittanceAddresses = mergeByID(old.RemittanceAddresses, r.RemittanceAddresses, addrID)
	}
	// A record equal to the stored one changes nothing
	// (supplierindex.Index.Apply).
	cs.ix.Apply(recs, nil)
	counts.Add(datafile.KindSuppliers, sups)
	counts.Add(datafile.KindContacts, contacts)
	counts.Add(datafile.KindRemittanceAddresses, addrs)
}

func contactID(c supplier.Contact) uuid.UUID        { return c.ID }
func addrID(a supplier.RemittanceAddress) uuid.UUID { return a.ID }

// ids returns the ids of items.
func ids[T any](items []T, id func(T) uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, len(items))
	for i, it := range items {
		out[i] = id(it)
	}
	return out
}

// addOutcomes adds to o what an import did with the entries named (by
// id) in a supplier's old and new lists: created when old lacks one,
// unchanged when same says the two are alike, updated otherwise.
func addOutcomes[T any](o datafile.Outcome, named []uuid.UUID, old, now []T, id func(T) uuid.UUID, same func(a, b *T) bool) datafile.Outcome {
	if len(named) == 0 {
		return o
	}
	index := func(items []T) map[uuid.UUID]int {
		m := make(map[uuid.UUID]int, len(items))
		for i, it := range items {
			m[id(it)] = i
		}
		return m
	}
	oldAt, nowAt := index(old), index(now)
	for _, n := range named {
		i, ok := oldAt[n]
		switch {
		case !ok:
			o.Created++
		case same(&old[i], &now[nowAt[n]]):
			o.Unchanged++
		default:
			o.Updated++
		}
	}
	return o
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

// importTokens upserts c's tokens by secret and returns what it did;
// s.tokens.mu is held. An import never un-revokes.
func (s *Store) importTokens(c *datafile.Community) datafile.Outcome {
	x := &s.tokens
	var o datafile.Outcome
	for _, t := range c.Tokens {
		h := auth.HashSecret(t.Token)
		tok, ok := x.byHash[h]
		old := tok
		if !ok {
			tok = auth.Token{ID: auth.TokenID(h), Hash: h, Community: c.ID, CreatedAt: nowMicros()}
			x.byID[tok.ID] = h
		}
		tok.Scopes = slices.Clip(slices.Clone(t.Scopes))
		tok.Expires = timeOrZero(t.Expires)
		tok.Revoked = tok.Revoked || t.Revoked
		x.byHash[h] = tok
		switch {
		case !ok:
			o.Created++
		case slices.Equal(old.Scopes, tok.Scopes) && old.Expires.Equal(tok.Expires) && old.Revoked == tok.Revoked:
			o.Unchanged++
		default:
			o.Updated++
		}
	}
	return o
}

// importAccounts upserts the built accounts by id and returns what it
// did: the allowlist is replaced, keys are upserted by secret (a key
// stored but not in the file is kept); s.accounts.mu is held. An import
// never reactivates a deactivated key.
func (s *Store) importAccounts(built []auth.ServiceAccount) datafile.Outcome {
	x := &s.accounts
	var o datafile.Outcome
	for _, a := range built {
		cur, ok := x.byID[a.ID]
		if !ok {
			x.put(a)
			o.Created++
			continue
		}
		changed := !slices.Equal(cur.AllowedIPs, a.AllowedIPs)
		cur.AllowedIPs = a.AllowedIPs
		cur.Keys = slices.Clone(cur.Keys)
		for _, k := range a.Keys {
			j := slices.IndexFunc(cur.Keys, func(o auth.Key) bool { return o.Hash == k.Hash })
			switch {
			case j < 0:
				cur.Keys = append(cur.Keys, k)
				changed = true
			case cur.Keys[j].Active && !k.Active:
				cur.Keys[j].Active = false
				changed = true
			}
		}
		x.put(cur)
		if changed {
			o.Updated++
		} else {
			o.Unchanged++
		}
	}
	return o
}

// importUsers upserts c's users by id, as the file has them (no
// auto-roles added: docs: users.md "Auto-roles"); s.users.mu is held and
// importCheck passed. A changed user is a new version; usernames move in
// two passes, so that users who swap names do not collide. It returns
// what it did.
func (s *Store) importUsers(c *datafile.Community) datafile.Outcome {
	x := &s.users
	names := x.byName[c.ID]
	if names == nil {
		names = make(map[string]*userEntry, len(c.Users))
		x.byName[c.ID] = names
	}
	changed := make([]*userEntry, 0, len(c.Users))
	var o datafile.Outcome
	for _, u := range c.Users {
		e := x.byID[u.ID]
		if e == nil {
			e = &userEntry{community: c.ID}
			x.byID[u.ID] = e
			o.Created++
		} else {
			want := u
			want.Version = e.u.Version
			if userEqual(e.u, want) {
				o.Unchanged++
				continue
			}
			o.Updated++
			if key := user.UsernameKey(e.u.Username); names[key] == e {
				delete(names, key)
			}
		}
		v := e.u.Version + 1 // 1 for a new user
		e.u = u.Clone()
		e.u.Version = v
		changed = append(changed, e)
	}
	for _, e := range changed {
		names[user.UsernameKey(e.u.Username)] = e
	}
	return o
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
