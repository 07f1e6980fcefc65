package scim

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/procurekit/procure/auth"
)

// authenticate checks the request's Authorization: Bearer <API key> and
// returns the community of the account holding the key. The key alone
// names the account (auth.KeyHashStore finds it by the key's SHA-256
// hash), so an identity provider needs only one secret.
//
// A missing or malformed header, a key no account holds, a deactivated
// key and a client outside the account's allowlist all return an error
// matching auth.ErrUnauthenticated (the one 401); the error's text says
// which, for the log, and never holds the key. A store failure is
// returned as is (a 500 or 503).
func (a *scimAPI) authenticate(r *http.Request, client netip.Addr) (string, error) {
	scheme, key, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	key = strings.TrimSpace(key)
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" {
		return "", fmt.Errorf("%w: no Authorization: Bearer <API key> header", auth.ErrUnauthenticated)
	}
	h := auth.HashSecret(key)
	acc, err := a.keys.ServiceAccountByKeyHash(r.Context(), h)
	switch {
	case errors.Is(err, auth.ErrUnknown):
		return "", fmt.Errorf("%w: the key belongs to no service account", auth.ErrUnauthenticated)
	case err != nil:
		return "", fmt.Errorf("service account by key: %w", err)
	}
	// The store matched by hash; compare again, in constant time and over
	// every key, so that a store that matched loosely lets nobody in and
	// the time taken does not tell which key matched.
	matched, matchedInactive := 0, 0
	for _, k := range acc.Keys {
		eq := subtle.ConstantTimeCompare(k.Hash[:], h[:])
		active := 0
		if k.Active {
			active = 1
		}
		matched |= eq & active
		matchedInactive |= eq &^ active
	}
	switch {
	case matched != 1 && matchedInactive == 1:
		return "", fmt.Errorf("%w: service account %q: the key is deactivated", auth.ErrUnauthenticated, acc.ID)
	case matched != 1:
		return "", fmt.Errorf("%w: the key belongs to no service account", auth.ErrUnauthenticated)
	case len(acc.AllowedIPs) > 0 && !auth.AddrAllowed(client, acc.AllowedIPs):
		return "", fmt.Errorf("%w: service account %q: client address %s is outside its allowlist", auth.ErrUnauthenticated, acc.ID, client)
	}
	if rec, ok := a.keys.(auth.UsageRecorder); ok {
		rec.KeyUsed(r.Context(), h, time.Now())
	}
	return acc.Community, nil
}
