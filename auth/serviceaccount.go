package auth

import (
	"context"
	"net/netip"
	"time"
)

// ServiceAccount is a user-API caller (docs: users.md "Authentication"): a public id, one or more
// keys (kept as hashes), and an optional IP allowlist.
type ServiceAccount struct {
	ID        string
	Community string
	Keys      []Key
	// AllowedIPs, when not empty, lists the networks requests must come
	// from; a single address is a /32 or /128 prefix.
	AllowedIPs []netip.Prefix
}

// Key is one API key of a service account. Several may be active at once,
// so that callers can move to a new key before the old one is deactivated.
type Key struct {
	// ID names the key for operators; it is not a secret. A key from a
	// data file gets KeyID(Hash).
	ID     string
	Hash   Hash
	Active bool
	// CreatedAt is when the key was stored; LastUsedAt when it last
	// authenticated a request, to the minute (zero: never).
	CreatedAt  time.Time
	LastUsedAt time.Time
}

// KeyStore finds service accounts by their public id.
type KeyStore interface {
	// ServiceAccount returns the account with that id, or an error
	// matching ErrUnknown. It is safe for concurrent use.
	ServiceAccount(ctx context.Context, id string) (ServiceAccount, error)
}

// KeyHashStore is an optional capability of a KeyStore, found by type
// assertion: finding the account that holds a key from the key alone, for
// callers that send only the key (a SCIM client's Authorization: Bearer
// <API key>).
type KeyHashStore interface {
	// ServiceAccountByKeyHash returns the account holding a key (active or
	// not) whose hash is h, with all its keys, or an error matching
	// ErrUnknown when no account holds it (or, should two hold it, both
	// are refused). It is safe for concurrent use.
	ServiceAccountByKeyHash(ctx context.Context, h Hash) (ServiceAccount, error)
}
