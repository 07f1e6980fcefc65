// Package auth authenticates the callers of the two inbound APIs and
// carries who they are in the request context.
//
// Interface A callers present a bearer token (docs: suppliers.md "Authentication"); Interface B
// callers present a service account id and API key (docs: users.md "Authentication"). Secrets are
// never stored: stores keep the SHA-256 hash of each (Hash), and a secret
// never appears in a log line or an error. Every failure to authenticate
// matches ErrUnauthenticated, whatever part failed, so that responses do not
// tell an attacker which part was wrong (docs: users.md).
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"
)

// Errors of this package. Stores return ErrUnknown for an unknown token or
// account; authenticators turn every failure into ErrUnauthenticated.
var (
	ErrUnauthenticated = errors.New("authentication failed")
	ErrForbidden       = errors.New("access denied")
	ErrUnknown         = errors.New("unknown credential")
)

// ScopeSuppliersRead lets a bearer token read the supplier API.
const ScopeSuppliersRead = "suppliers:read"

// Hash is the SHA-256 hash of a secret; stores keep only this.
type Hash [sha256.Size]byte

// HashSecret hashes a secret (a bearer token or an API key).
func HashSecret(secret string) Hash {
	// Every request hashes its credential. []byte(secret) allocates for
	// a secret over 32 bytes (NewAPIKey's are 60); a copy on the stack
	// does not.
	if len(secret) <= 128 {
		var buf [128]byte
		n := copy(buf[:], secret)
		return sha256.Sum256(buf[:n])
	}
	return sha256.Sum256([]byte(secret))
}

// Equal compares two hashes in constant time.
func (h Hash) Equal(o Hash) bool { return subtle.ConstantTimeCompare(h[:], o[:]) == 1 }

// String returns the hash in hex; it is safe to log (it is not the secret).
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// Principal is an authenticated caller: the community whose data it sees,
// and what it may do there.
type Principal struct {
	// Community is the id of the caller's community; every store call is
	// scoped by it.
	Community string
	// Scopes are the bearer token's scopes (empty for service accounts).
	Scopes []string
	// Subject names the credential for logs: a service account id, or the
	// first characters of a token hash - never a secret.
	Subject string
}

// HasScope reports whether p holds scope.
func (p Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

type principalKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal carried by ctx, if any.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Token is a stored bearer token (never the token itself: its hash).
type Token struct {
	// ID names the token for operators (listing, revoking); it is not a
	// secret. A token from a data file gets TokenID(Hash).
	ID        string
	Name      string
	Hash      Hash
	Community string
	Scopes    []string
	// Expires, when not zero, is the instant from which the token is
	// no longer accepted.
	Expires time.Time
	Revoked bool
	// CreatedAt is when the token was stored; LastUsedAt when it last
	// authenticated a request, to the minute (zero: never).
	CreatedAt  time.Time
	LastUsedAt time.Time
}

// TokenStore finds bearer tokens by the hash of the token.
type TokenStore interface {
	// TokenByHash returns the token whose hash is h, or an error matching
	// ErrUnknown. It is safe for concurrent use.
	TokenByHash(ctx context.Context, h Hash) (Token, error)
}

// BearerToken reads an Authorization header value of the bearer scheme,
// "Bearer <token>" (the scheme word in any case; white space around the
// token ignored), and returns the token. ok is false for an empty header,
// another scheme, or no token. It is the one reader of the header: the
// bearer tokens of the supplier API, the admin token, the API keys SCIM
// clients send and the connector's secret all arrive in it.
func BearerToken(header string) (token string, ok bool) {
	scheme, token, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// Bearer authenticates `Authorization: Bearer <token>` headers.
type Bearer struct {
	Tokens TokenStore
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Authenticate checks an Authorization header value. It returns an error
// matching ErrUnauthenticated for a missing header, another scheme, an
// empty, unknown, revoked or expired token, and a store failure as is (so
// that it becomes a 500, not a 401).
func (b *Bearer) Authenticate(ctx context.Context, header string) (Principal, error) {
	token, ok := BearerToken(header)
	if !ok {
		return Principal{}, ErrUnauthenticated
	}
	h := HashSecret(token)
	t, err := b.Tokens.TokenByHash(ctx, h)
	if errors.Is(err, ErrUnknown) {
		return Principal{}, ErrUnauthenticated
	}
	if err != nil {
		return Principal{}, err
	}
	// The lookup was by hash; compare again in constant time so that a
	// store that matched loosely (say, by prefix) cannot let a token in.
	if !t.Hash.Equal(h) || t.Revoked {
		return Principal{}, ErrUnauthenticated
	}
	rec, records := b.Tokens.(UsageRecorder)
	var now time.Time // read once, and only when needed: on every request
	if records || !t.Expires.IsZero() {
		if b.Now != nil {
			now = b.Now()
		} else {
			now = time.Now()
		}
	}
	if !t.Expires.IsZero() && !now.Before(t.Expires) {
		return Principal{}, ErrUnauthenticated
	}
	if records {
		rec.TokenUsed(ctx, h, now) // lastUsedAt: the store writes at most once a minute
	}
	return Principal{Community: t.Community, Scopes: t.Scopes, Subject: tokenSubject(h)}, nil
}

// tokenSubject is "token:" and the first 12 hex digits of the token's
// hash, built in one allocation (this runs on every request).
func tokenSubject(h Hash) string {
	const prefix = "token:"
	var b [len(prefix) + 12]byte
	copy(b[:], prefix)
	hex.Encode(b[len(prefix):], h[:6])
	return string(b[:])
}
