package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math/big"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"
)

// The request headers of Interface B (docs: users.md "Authentication").
const (
	HeaderAccountID = "Service-Account-ID" // public id of the service account
	HeaderAPIKey    = "Service-API-Key"    // the secret key
)

// ServiceKey authenticates user-API callers by service account id and API
// key (docs: users.md "Authentication").
type ServiceKey struct {
	// Accounts finds service accounts by id. Required.
	Accounts KeyStore
	// TrustedProxies are the reverse proxies whose X-Forwarded-For header
	// is believed (ClientIP). None means the header is ignored.
	TrustedProxies []netip.Prefix
}

// ClientIP returns the caller's address under a's trusted proxies; see
// the function ClientIP.
func (a *ServiceKey) ClientIP(remoteAddr string, forwardedFor []string) netip.Addr {
	return ClientIP(remoteAddr, forwardedFor, a.TrustedProxies)
}

// Authenticate checks the two header values of a request sent from client
// (see ClientIP) and returns the account's principal: its community, and
// the subject "service-account:<id>".
//
// A missing header, an unknown account, a key that matches none of the
// account's active keys (a deactivated key included), and a client outside
// the account's allowlist all return an error matching
// ErrUnauthenticated - so an HTTP layer answers each with one and the
// same 401. The error's text says which part failed, for the server's
// log; it never holds the key. A failure of the KeyStore is returned as
// is (a 500, not a 401).
//
// The key's SHA-256 hash is compared with every key of the account in
// constant time, and the comparison does not stop at a match, so the time
// taken does not reveal which key matched, or how many keys exist before
// it.
//
// The account id is public (docs: users.md "Authentication"), but a caller who swaps the two
// headers sends the key as the account id, so an id that names no
// account is never written into the error: the error carries only
// AccountIDFingerprint of it (enough to tell repeated failures of one
// caller apart). The id of an account that exists is named.
//
// An account id that no store can hold - longer than MaxAccountIDLength
// bytes, or not valid UTF-8, or holding a control character such as NUL -
// is refused before the store is asked (PostgreSQL cannot take NUL or
// invalid UTF-8 as text), with the same ErrUnauthenticated.
func (a *ServiceKey) Authenticate(ctx context.Context, accountID, apiKey string, client netip.Addr) (Principal, error) {
	if accountID == "" || apiKey == "" {
		return Principal{}, fmt.Errorf("%w: the %s and %s headers are both required", ErrUnauthenticated, HeaderAccountID, HeaderAPIKey)
	}
	if !plausibleAccountID(accountID) {
		return Principal{}, fmt.Errorf("%w: the %s header is not an account id (%s)", ErrUnauthenticated, HeaderAccountID, AccountIDFingerprint(accountID))
	}
	h := HashSecret(apiKey)
	acc, err := a.Accounts.ServiceAccount(ctx, accountID)
	switch {
	case errors.Is(err, ErrUnknown):
		return Principal{}, fmt.Errorf("%w: unknown service account (%s)", ErrUnauthenticated, AccountIDFingerprint(accountID))
	case err != nil:
		// A store failure: the id may still be a misplaced key, so only
		// its fingerprint is named. The cause keeps its own sentinel (a
		// timeout, say) for the HTTP layer to classify.
		return Principal{}, fmt.Errorf("service account (%s): %w", AccountIDFingerprint(accountID), err)
	case acc.ID != accountID:
		// A store that matched loosely (another case, a prefix) must not
		// let a caller in under another account's id.
		return Principal{}, fmt.Errorf("%w: unknown service account (%s)", ErrUnauthenticated, AccountIDFingerprint(accountID))
	}
	rec, _ := a.Accounts.(UsageRecorder)
	return admit(ctx, acc, h, client, rec)
}

// admit ends the authentication of a key whose hash is h, sent from
// client, by the account acc that a store found for it: it returns the
// account's principal when one of the account's active keys is h and the
// client is within the account's allowlist (if it has one), and records
// the key's use with rec, when not nil. Every refusal matches
// ErrUnauthenticated and names the account, never the key.
//
// The hash is compared with every key of the account in constant time,
// and the comparison does not stop at a match, so the time taken does not
// reveal which key matched, or how many keys exist before it; and a store
// that matched loosely lets nobody in.
func admit(ctx context.Context, acc ServiceAccount, h Hash, client netip.Addr, rec UsageRecorder) (Principal, error) {
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
	ipOK := len(acc.AllowedIPs) == 0 || AddrAllowed(client, acc.AllowedIPs)
	switch {
	case matched != 1 && matchedInactive == 1:
		return Principal{}, fmt.Errorf("%w: service account %q: the key is deactivated", ErrUnauthenticated, acc.ID)
	case matched != 1:
		return Principal{}, fmt.Errorf("%w: service account %q: the key matches none of its keys", ErrUnauthenticated, acc.ID)
	case !ipOK:
		return Principal{}, fmt.Errorf("%w: service account %q: client address %s is outside its allowlist", ErrUnauthenticated, acc.ID, describeAddr(client))
	}
	if rec != nil {
		rec.KeyUsed(ctx, h, time.Now()) // lastUsedAt: the store writes at most once a minute
	}
	return Principal{Community: acc.Community, Subject: "service-account:" + acc.ID}, nil
}

// KeyBearer authenticates callers that send only an API key, as a bearer
// token: a SCIM client's `Authorization: Bearer <API key>` (docs: scim.md
// "Authentication"). The key alone names its service account, so an
// identity provider needs only one secret.
type KeyBearer struct {
	// Accounts finds the account holding a key by the key's hash.
	// Required.
	Accounts KeyHashStore
}

// Authenticate checks an Authorization header value of a request sent
// from client (see ClientIP) and returns the principal of the account
// holding the key, as ServiceKey.Authenticate does for the account id and
// key headers: a missing or malformed header, a key no account holds, a
// deactivated key and a client outside the account's allowlist all
// return an error matching ErrUnauthenticated, whose text says which for
// the server's log and never holds the key. A failure of the store is
// returned as is (a 500 or 503, not a 401).
func (a *KeyBearer) Authenticate(ctx context.Context, header string, client netip.Addr) (Principal, error) {
	key, ok := BearerToken(header)
	if !ok {
		return Principal{}, fmt.Errorf("%w: no Authorization: Bearer <API key> header", ErrUnauthenticated)
	}
	h := HashSecret(key)
	acc, err := a.Accounts.ServiceAccountByKeyHash(ctx, h)
	switch {
	case errors.Is(err, ErrUnknown):
		return Principal{}, fmt.Errorf("%w: the key belongs to no service account", ErrUnauthenticated)
	case err != nil:
		return Principal{}, fmt.Errorf("service account by key: %w", err)
	}
	rec, _ := a.Accounts.(UsageRecorder)
	return admit(ctx, acc, h, client, rec)
}

// MaxAccountIDLength is the longest Service-Account-ID header value
// Authenticate looks up, in bytes: an account id is at most 255 characters
// (the length of every id of the spec), so at most 1020 bytes of UTF-8.
const MaxAccountIDLength = 1020

// plausibleAccountID reports whether id can be an account id at all: valid
// UTF-8, no control characters (NUL included), at most MaxAccountIDLength
// bytes.
func plausibleAccountID(id string) bool {
	if len(id) > MaxAccountIDLength || !utf8.ValidString(id) {
		return false
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// AccountIDFingerprint names an account id in logs without writing it:
// "id sha256:" and the first 12 hex digits of the SHA-256 of the id. An
// operator who knows the ids can match it (and a key sent as an id, by a
// caller who swapped the two headers, is not revealed: 48 bits of its
// hash say nothing useful about a 256-bit key).
func AccountIDFingerprint(id string) string {
	h := HashSecret(id)
	return "id sha256:" + hex.EncodeToString(h[:6])
}

func describeAddr(a netip.Addr) string {
	if !a.IsValid() {
		return "(unknown: unreadable peer or X-Forwarded-For entry)"
	}
	return a.String()
}

// APIKeyPrefix starts every key NewAPIKey makes, so that secret scanners
// (and people) recognise a leaked key: "procure_sk_" followed by 43
// base62 characters of randomness and a 6-character base62 CRC-32 checksum
// of them (IsAPIKeyFormat), 60 characters in all.
const APIKeyPrefix = "procure_sk_"

const (
	keyRandomBytes = 32 // 256 bits
	keyBodyLen     = 43 // base62 digits that hold 256 bits (62^43 > 2^256)
	keySumLen      = 6  // base62 digits that hold a CRC-32 (62^6 > 2^32)
)

// NewAPIKey returns a new API key - 256 bits from crypto/rand in the
// format of APIKeyPrefix - and its hash, which is all a KeyStore keeps.
// Deliver the key to the customer's administrator and forget it.
func NewAPIKey() (key string, hash Hash) {
	var b [keyRandomBytes]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	body := base62(new(big.Int).SetBytes(b[:]), keyBodyLen)
	key = APIKeyPrefix + body + keyChecksum(body)
	return key, HashSecret(key)
}

// IsAPIKeyFormat reports whether s has the format NewAPIKey produces,
// checksum included. It tells a typo or a truncated key from a real one
// without a lookup; it says nothing about whether the key is valid.
func IsAPIKeyFormat(s string) bool {
	rest, ok := strings.CutPrefix(s, APIKeyPrefix)
	if !ok || len(rest) != keyBodyLen+keySumLen {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if !isBase62(rest[i]) {
			return false
		}
	}
	body, sum := rest[:keyBodyLen], rest[keyBodyLen:]
	return subtle.ConstantTimeCompare([]byte(keyChecksum(body)), []byte(sum)) == 1
}

func keyChecksum(body string) string {
	return base62(new(big.Int).SetUint64(uint64(crc32.ChecksumIEEE([]byte(body)))), keySumLen)
}

// base62 writes n in base 62 (0-9, a-z, A-Z), left-padded with '0' to
// width digits.
func base62(n *big.Int, width int) string {
	s := n.Text(62)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

func isBase62(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
