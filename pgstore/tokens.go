package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/auth"
)

var (
	_ auth.TokenStore = (*Store)(nil)
	_ auth.KeyStore   = (*Store)(nil)
)

// TokenByHash returns the bearer token whose hash is h, or an error
// matching auth.ErrUnknown (auth.TokenStore): what authentication needs
// (community, scopes, expiry, revocation); Tokens lists the rest. Without
// WithCredentialCache it reads the database on every call, so a token
// revoked on any node is refused by the next request on this one; with it,
// within half a second (docs: live-data.md allows a second), and at once on
// the node that revoked it. A read replica (WithReadDSN) adds at most
// 300 ms to the other nodes' delay (replica.go).
func (s *Store) TokenByHash(ctx context.Context, h auth.Hash) (auth.Token, error) {
	return cachedLookup(s.creds, s.creds.tokenMap(), h, cloneToken, func() (auth.Token, error) { return s.tokenByHash(ctx, h) })
}

func (s *Store) tokenByHash(ctx context.Context, h auth.Hash) (auth.Token, error) {
	t := auth.Token{Hash: h}
	var expires *time.Time
	err := s.rd().QueryRow(ctx, `SELECT community_id, scopes, expires, revoked FROM tokens WHERE hash = $1`, h[:]).
		Scan(&t.Community, &t.Scopes, &expires, &t.Revoked)
	if errors.Is(err, pgx.ErrNoRows) {
		return auth.Token{}, auth.ErrUnknown
	}
	if err != nil {
		// The hash is not the secret, but there is no need to show it.
		return auth.Token{}, fmt.Errorf("pgstore: token: %w", err)
	}
	if expires != nil {
		t.Expires = expires.UTC()
	}
	return t, nil
}

// ServiceAccount returns the service account with that id, its keys
// (hash and state: what authentication needs; ServiceAccounts lists the
// rest) in the order they were added, a data file's in its order, or an
// error matching auth.ErrUnknown (auth.KeyStore). Like TokenByHash it
// reads the database on every call unless WithCredentialCache is on, so a
// key deactivated on any node is refused by the next request on this one
// (with the cache: within half a second; a read replica adds at most
// 300 ms). An id PostgreSQL cannot hold
// (NUL, invalid UTF-8) names no account.
func (s *Store) ServiceAccount(ctx context.Context, id string) (auth.ServiceAccount, error) {
	return cachedLookup(s.creds, s.creds.accountMap(), id, cloneAccount, func() (auth.ServiceAccount, error) { return s.serviceAccount(ctx, id) })
}

func (s *Store) serviceAccount(ctx context.Context, id string) (auth.ServiceAccount, error) {
	if !storable(id) {
		return auth.ServiceAccount{}, auth.ErrUnknown
	}
	a := auth.ServiceAccount{ID: id}
	var hashes [][]byte
	var active []bool
	var ips []netip.Prefix
	err := s.rd().QueryRow(ctx, `SELECT community_id, allowed_ips,
			ARRAY(SELECT hash FROM service_account_keys WHERE account_id = a.id ORDER BY ord),
			ARRAY(SELECT active FROM service_account_keys WHERE account_id = a.id ORDER BY ord)
		FROM service_accounts a WHERE id = $1`, id).
		Scan(&a.Community, &ips, &hashes, &active)
	if errors.Is(err, pgx.ErrNoRows) {
		return auth.ServiceAccount{}, auth.ErrUnknown
	}
	if err != nil {
		return auth.ServiceAccount{}, fmt.Errorf("pgstore: service account: %w", err)
	}
	if len(hashes) != len(active) {
		return auth.ServiceAccount{}, fmt.Errorf("pgstore: service account %q: keys changed while read", id)
	}
	if len(ips) > 0 {
		a.AllowedIPs = ips
	}
	for i, h := range hashes {
		var k auth.Key
		if copy(k.Hash[:], h) != len(k.Hash) {
			return auth.ServiceAccount{}, fmt.Errorf("pgstore: service account %q: key %d: stored hash has %d bytes", id, i, len(h))
		}
		k.Active = active[i]
		a.Keys = append(a.Keys, k)
	}
	return a, nil
}

var _ auth.KeyHashStore = (*Store)(nil)

// ServiceAccountByKeyHash returns the service account holding a key with
// hash h (auth.KeyHashStore), or an error matching auth.ErrUnknown - also
// when two accounts hold it, so that neither is let in by it.
func (s *Store) ServiceAccountByKeyHash(ctx context.Context, h auth.Hash) (auth.ServiceAccount, error) {
	return cachedLookup(s.creds, s.creds.byKeyMap(), h, cloneAccount, func() (auth.ServiceAccount, error) { return s.serviceAccountByKeyHash(ctx, h) })
}

func (s *Store) serviceAccountByKeyHash(ctx context.Context, h auth.Hash) (auth.ServiceAccount, error) {
	var ids []string
	err := s.rd().QueryRow(ctx, `SELECT ARRAY(SELECT DISTINCT account_id FROM service_account_keys WHERE hash = $1 LIMIT 2)`, h[:]).Scan(&ids)
	if err != nil {
		return auth.ServiceAccount{}, fmt.Errorf("pgstore: service account by key: %w", err)
	}
	if len(ids) != 1 {
		return auth.ServiceAccount{}, auth.ErrUnknown
	}
	return s.serviceAccount(ctx, ids[0])
}
