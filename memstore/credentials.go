package memstore

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/budget"
)

// The write side of credentials and budgets (docs: live-data.md, "Admin
// API"). Each write takes its part's lock, so the next lookup sees it.

var (
	_ auth.TokenWriter   = (*Store)(nil)
	_ auth.KeyWriter     = (*Store)(nil)
	_ auth.UsageRecorder = (*Store)(nil)
	_ budget.Writer      = (*Store)(nil)
)

// nowMicros is the current time as stores keep it: UTC, microseconds.
func nowMicros() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// AddToken implements auth.TokenWriter.
func (s *Store) AddToken(ctx context.Context, t auth.Token) (auth.Token, error) {
	defer s.timeWrite("AddToken", s.writeStart())
	if err := ctx.Err(); err != nil {
		return auth.Token{}, err
	}
	if err := auth.ValidateToken(t); err != nil {
		return auth.Token{}, err
	}
	if err := s.needCommunity(t.Community); err != nil {
		return auth.Token{}, err
	}
	if t.ID == "" {
		t.ID = auth.TokenID(t.Hash)
	}
	t.Scopes = slices.Clip(slices.Clone(t.Scopes))
	t.CreatedAt, t.LastUsedAt = nowMicros(), time.Time{}
	if !t.Expires.IsZero() {
		t.Expires = t.Expires.UTC().Truncate(time.Microsecond)
	}
	x := &s.tokens
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, dup := x.byHash[t.Hash]; dup {
		return auth.Token{}, fmt.Errorf("token: the secret is in use already: %w", procure.ErrConflict)
	}
	if _, dup := x.byID[t.ID]; dup {
		return auth.Token{}, fmt.Errorf("token %q: the id is in use already: %w", t.ID, procure.ErrConflict)
	}
	x.byHash[t.Hash] = t
	x.byID[t.ID] = t.Hash
	return t, nil
}

// RevokeToken implements auth.TokenWriter.
func (s *Store) RevokeToken(ctx context.Context, community, id string) error {
	defer s.timeWrite("RevokeToken", s.writeStart())
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.needCommunity(community); err != nil {
		return err
	}
	x := &s.tokens
	x.mu.Lock()
	defer x.mu.Unlock()
	h, ok := x.byID[id]
	t := x.byHash[h]
	if !ok || t.Community != community {
		return fmt.Errorf("token %q: %w", id, auth.ErrNotFound)
	}
	t.Revoked = true
	x.byHash[h] = t
	return nil
}

// Tokens implements auth.TokenWriter.
func (s *Store) Tokens(ctx context.Context, community string) ([]auth.Token, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.needCommunity(community); err != nil {
		return nil, err
	}
	x := &s.tokens
	x.mu.RLock()
	out := []auth.Token{}
	for _, t := range x.byHash {
		if t.Community == community {
			t.Scopes = slices.Clone(t.Scopes)
			out = append(out, t)
		}
	}
	x.mu.RUnlock()
	slices.SortFunc(out, func(a, b auth.Token) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// TokenUsed implements auth.UsageRecorder: LastUsedAt becomes at's minute
// when it is not that minute already. A minute already recorded costs a
// read lock only, so calling it on every request writes at most once a
// minute per token.
func (s *Store) TokenUsed(_ context.Context, h auth.Hash, at time.Time) {
	minute := at.UTC().Truncate(time.Minute)
	x := &s.tokens
	x.mu.RLock()
	t, ok := x.byHash[h]
	x.mu.RUnlock()
	if !ok || !t.LastUsedAt.Before(minute) {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if t, ok := x.byHash[h]; ok && t.LastUsedAt.Before(minute) {
		t.LastUsedAt = minute
		x.byHash[h] = t
	}
}

// KeyUsed implements auth.UsageRecorder for service-account keys, as
// TokenUsed does for tokens.
func (s *Store) KeyUsed(_ context.Context, h auth.Hash, at time.Time) {
	minute := at.UTC().Truncate(time.Minute)
	x := &s.accounts
	stale := func() (auth.ServiceAccount, int) {
		a, ok := x.byID[x.keyOwner[h]]
		if !ok {
			return a, -1
		}
		i := slices.IndexFunc(a.Keys, func(k auth.Key) bool { return k.Hash == h })
		if i < 0 || !a.Keys[i].LastUsedAt.Before(minute) {
			return a, -1
		}
		return a, i
	}
	x.mu.RLock()
	_, i := stale()
	x.mu.RUnlock()
	if i < 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if a, i := stale(); i >= 0 {
		a.Keys = slices.Clone(a.Keys) // readers may hold the old slice
		a.Keys[i].LastUsedAt = minute
		x.byID[a.ID] = a
	}
}

// account returns the community's account id; x.mu is held.
func (x *accounts) account(community, id string) (auth.ServiceAccount, error) {
	a, ok := x.byID[id]
	if !ok || a.Community != community {
		return auth.ServiceAccount{}, fmt.Errorf("service account %q: %w", id, auth.ErrNotFound)
	}
	return a, nil
}

// PutServiceAccount implements auth.KeyWriter.
func (s *Store) PutServiceAccount(ctx context.Context, community, id string, allowedIPs []netip.Prefix) (auth.ServiceAccount, error) {
	defer s.timeWrite("PutServiceAccount", s.writeStart())
	if err := ctx.Err(); err != nil {
		return auth.ServiceAccount{}, err
	}
	if err := auth.ValidateAccountID(id); err != nil {
		return auth.ServiceAccount{}, err
	}
	if err := auth.ValidateAllowedIPs(allowedIPs); err != nil {
		return auth.ServiceAccount{}, err
	}
	if err := s.needCommunity(community); err != nil {
		return auth.ServiceAccount{}, err
	}
	ips := make([]netip.Prefix, len(allowedIPs))
	for i, p := range allowedIPs {
		ips[i] = p.Masked()
	}
	x := &s.accounts
	x.mu.Lock()
	defer x.mu.Unlock()
	a, ok := x.byID[id]
	switch {
	case !ok:
		a = auth.ServiceAccount{ID: id, Community: community}
	case a.Community != community:
		return auth.ServiceAccount{}, fmt.Errorf("service account %q belongs to another community: %w", id, procure.ErrConflict)
	}
	a.AllowedIPs = ips
	a.Keys = slices.Clone(a.Keys)
	x.put(a)
	return cloneAccount(a), nil
}

// AddKey implements auth.KeyWriter.
func (s *Store) AddKey(ctx context.Context, community, accountID string, k auth.Key) (auth.Key, error) {
	defer s.timeWrite("AddKey", s.writeStart())
	if err := ctx.Err(); err != nil {
		return auth.Key{}, err
	}
	if err := auth.ValidateKey(k); err != nil {
		return auth.Key{}, err
	}
	if err := s.needCommunity(community); err != nil {
		return auth.Key{}, err
	}
	if k.ID == "" {
		k.ID = auth.KeyID(k.Hash)
	}
	k.CreatedAt, k.LastUsedAt = nowMicros(), time.Time{}
	x := &s.accounts
	x.mu.Lock()
	defer x.mu.Unlock()
	a, err := x.account(community, accountID)
	if err != nil {
		return auth.Key{}, err
	}
	if _, dup := x.keyOwner[k.Hash]; dup {
		return auth.Key{}, fmt.Errorf("key: the secret is in use already: %w", procure.ErrConflict)
	}
	if slices.ContainsFunc(a.Keys, func(o auth.Key) bool { return o.ID == k.ID }) {
		return auth.Key{}, fmt.Errorf("key %q: the id is in use already: %w", k.ID, procure.ErrConflict)
	}
	a.Keys = append(slices.Clone(a.Keys), k)
	x.put(a)
	return k, nil
}

// SetKeyActive implements auth.KeyWriter.
func (s *Store) SetKeyActive(ctx context.Context, community, accountID, keyID string, active bool) (auth.Key, error) {
	defer s.timeWrite("SetKeyActive", s.writeStart())
	if err := ctx.Err(); err != nil {
		return auth.Key{}, err
	}
	if err := s.needCommunity(community); err != nil {
		return auth.Key{}, err
	}
	x := &s.accounts
	x.mu.Lock()
	defer x.mu.Unlock()
	a, err := x.account(community, accountID)
	if err != nil {
		return auth.Key{}, err
	}
	i := slices.IndexFunc(a.Keys, func(k auth.Key) bool { return k.ID == keyID })
	if i < 0 {
		return auth.Key{}, fmt.Errorf("key %q of service account %q: %w", keyID, accountID, auth.ErrNotFound)
	}
	a.Keys = slices.Clone(a.Keys)
	a.Keys[i].Active = active
	x.put(a)
	return a.Keys[i], nil
}

// ServiceAccounts implements auth.KeyWriter.
func (s *Store) ServiceAccounts(ctx context.Context, community string) ([]auth.ServiceAccount, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.needCommunity(community); err != nil {
		return nil, err
	}
	x := &s.accounts
	x.mu.RLock()
	out := []auth.ServiceAccount{}
	for _, a := range x.byID {
		if a.Community == community {
			out = append(out, cloneAccount(a))
		}
	}
	x.mu.RUnlock()
	slices.SortFunc(out, func(a, b auth.ServiceAccount) int { return strings.Compare(a.ID, b.ID) })
	for i := range out {
		slices.SortStableFunc(out[i].Keys, func(a, b auth.Key) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
		})
	}
	return out, nil
}

// PutBudget implements budget.Writer. The community's table is immutable
// (checks read it without locks), so a write builds the next table: O(n)
// in the table's size, which is fine for admin writes.
func (s *Store) PutBudget(ctx context.Context, community, account string, amount decimal.Decimal) error {
	defer s.timeWrite("PutBudget", s.writeStart())
	if err := ctx.Err(); err != nil {
		return err
	}
	account = strings.TrimSpace(account)
	if err := budget.ValidateAccount(account); err != nil {
		return err
	}
	if err := budget.ValidateAmount(amount); err != nil {
		return err
	}
	if err := s.needCommunity(community); err != nil {
		return err
	}
	return s.editBudgets(community, func(rows map[string]decimal.Decimal) error {
		rows[account] = amount
		return nil
	})
}

// DeleteBudget implements budget.Writer.
func (s *Store) DeleteBudget(ctx context.Context, community, account string) error {
	defer s.timeWrite("DeleteBudget", s.writeStart())
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.needCommunity(community); err != nil {
		return err
	}
	account = strings.TrimSpace(account)
	return s.editBudgets(community, func(rows map[string]decimal.Decimal) error {
		if _, ok := rows[account]; !ok {
			return fmt.Errorf("account %q: %w", account, budget.ErrNotFound)
		}
		delete(rows, account)
		return nil
	})
}

// editBudgets replaces the community's table by edit's change of its rows.
func (s *Store) editBudgets(community string, edit func(map[string]decimal.Decimal) error) error {
	x := &s.budgets
	x.mu.Lock()
	defer x.mu.Unlock()
	rows := map[string]decimal.Decimal{}
	if t := x.byCommunity[community]; t != nil {
		rows = t.Rows()
	}
	if err := edit(rows); err != nil {
		return err
	}
	t, err := budget.NewTable(rows)
	if err != nil {
		return err
	}
	x.byCommunity[community] = t
	return nil
}
