package admin

import (
	"cmp"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/procurekit/procure/httpapi/internal/httpx"
)

// MinTokenBytes is the shortest admin token Mount and
// Handler accept (docs: admin.md "Listener and token"): 16 bytes, as
// the connector demands of its own secret, so the token cannot be guessed
// within the failed-attempt limit below.
const MinTokenBytes = 16

// Failed admin authentications are limited per client (docs: admin.md
// "Failed attempts"), by default: a client may fail FailBurst times in
// a row, and then once per FailEvery; past that it is answered 429
// with Retry-After before its token is looked at, so a guesser gains
// nothing by sending faster. A request that authenticates costs nothing
// and does not reset the count: only time does. Options'
// FailedAuthBurst and FailedAuthEvery change the defaults.
const (
	FailBurst = 10
	FailEvery = 6 * time.Second
)

// maxFailClients bounds the clients the limiter remembers. A client whose
// allowance has refilled is forgotten first (it is then like a new one);
// when every remembered client is still limited, new clients share one
// allowance, so an attack from many addresses cannot grow the map.
const maxFailClients = 4096

// failLimiter counts failed admin authentications per client: an IPv4
// address, or an IPv6 /64 (what one host usually holds).
type failLimiter struct {
	burst int
	every time.Duration
	now   func() time.Time

	mu       sync.Mutex
	clients  map[netip.Prefix]*rate.Limiter
	overflow *rate.Limiter
}

// newFailLimiter is the limiter of opts (Options.FailedAuthBurst and
// FailedAuthEvery), or nil when they turn it off.
func newFailLimiter(opts Options, now func() time.Time) *failLimiter {
	if opts.FailedAuthBurst < 0 {
		return nil
	}
	l := &failLimiter{
		burst:   cmp.Or(opts.FailedAuthBurst, FailBurst),
		every:   cmp.Or(opts.FailedAuthEvery, FailEvery),
		now:     now,
		clients: make(map[netip.Prefix]*rate.Limiter),
	}
	l.overflow = l.allowance()
	return l
}

func (l *failLimiter) allowance() *rate.Limiter {
	return rate.NewLimiter(rate.Every(l.every), l.burst)
}

// clientKey is the limiter's key for a request's peer address; a peer
// that cannot be parsed (a test's fake address) counts as the zero key.
func clientKey(r *http.Request) netip.Prefix {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{}
	}
	addr = addr.Unmap().WithZone("")
	bits := 32
	if addr.Is6() {
		bits = 64
	}
	p, _ := addr.Prefix(bits) // bits is within the address's length
	return p
}

// blocked reports how long the client must wait before its next attempt
// is looked at; 0 when it may try now (always, on a nil limiter).
func (l *failLimiter) blocked(key netip.Prefix) time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lim := l.clients[key]
	if lim == nil {
		if len(l.clients) < maxFailClients {
			return 0 // a client that never failed (or was forgotten)
		}
		lim = l.overflow
	}
	now := l.now()
	tokens := lim.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) * float64(l.every))
}

// failed records a failed authentication of the client (nothing, on a nil
// limiter).
func (l *failLimiter) failed(key netip.Prefix) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	lim := l.clients[key]
	if lim == nil {
		if len(l.clients) >= maxFailClients {
			l.forgetRefilled(now)
		}
		if len(l.clients) >= maxFailClients {
			lim = l.overflow
		} else {
			lim = l.allowance()
			l.clients[key] = lim
		}
	}
	lim.AllowN(now, 1)
}

// forgetRefilled drops the clients whose allowance is whole again: they are
// indistinguishable from clients never seen.
func (l *failLimiter) forgetRefilled(now time.Time) {
	for k, lim := range l.clients {
		if lim.TokensAt(now) >= float64(l.burst) {
			delete(l.clients, k)
		}
	}
}

// tooManyAttempts answers a client that failed too often: 429 with the
// seconds to wait (rounded up) in Retry-After.
func tooManyAttempts(w http.ResponseWriter, wait time.Duration) {
	secs := int((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	httpx.WriteJSON(w, http.StatusTooManyRequests, httpx.ErrorBody{
		Code:    httpx.CodeTooManyRequests,
		Message: "too many failed authentications from this client: retry after " + strconv.Itoa(max(secs, 1)) + " seconds",
	})
}
