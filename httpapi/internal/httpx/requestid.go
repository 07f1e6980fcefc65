package httpx

import (
	"math/rand/v2"
	"net/http"
)

// HeaderRequestID is the header that carries a request's id, in a
// request (the caller's own id) and in every answer.
const HeaderRequestID = "X-Request-Id"

// MaxRequestIDLength bounds an X-Request-Id the service takes from a
// caller (docs: operations.md "Request ids").
const MaxRequestIDLength = 64

// requestID is the id of r (docs: operations.md "Request ids"): the
// trace id of a well-formed W3C traceparent header; else the caller's
// X-Request-Id when it is 1 to MaxRequestIDLength characters of
// letters, digits and "-_.:"; else a new one, 32 lower-case hex digits
// like a trace id. A malformed header is ignored, never echoed: the id
// goes into log lines and a response header.
func requestID(r *http.Request) string {
	h := r.Header
	if v := h["Traceparent"]; len(v) == 1 {
		if id, ok := traceID(v[0]); ok {
			return id
		}
	}
	if v := h["X-Request-Id"]; len(v) == 1 && callerID(v[0]) {
		return v[0]
	}
	return newRequestID()
}

// traceID returns the trace id of a traceparent header value,
// "VV-TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT-PPPPPPPPPPPPPPPP-FF", when it is
// well-formed: hex fields of those lengths, version not ff (and
// exactly that length for version 00; a later version may append
// fields after a dash), trace and parent ids not all zeros.
func traceID(v string) (string, bool) {
	if len(v) < 55 || v[2] != '-' || v[35] != '-' || v[52] != '-' ||
		!lowerHex(v[:2]) || !lowerHex(v[3:35]) || !lowerHex(v[36:52]) || !lowerHex(v[53:55]) {
		return "", false
	}
	switch {
	case v[:2] == "ff", v[:2] == "00" && len(v) != 55, len(v) > 55 && v[55] != '-':
		return "", false
	case allZeros(v[3:35]), allZeros(v[36:52]):
		return "", false
	}
	return v[3:35], true
}

func lowerHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func allZeros(s string) bool {
	for i := range len(s) {
		if s[i] != '0' {
			return false
		}
	}
	return true
}

// callerID reports whether v may serve as a request id.
func callerID(v string) bool {
	if len(v) == 0 || len(v) > MaxRequestIDLength {
		return false
	}
	for i := range len(v) {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// newRequestID is 128 random bits in hex. math/rand/v2's generator is
// seeded from the system and cheap; an id needs to be unique, not secret.
func newRequestID() string {
	const hex = "0123456789abcdef"
	var b [32]byte
	hi, lo := rand.Uint64(), rand.Uint64()
	for i := range 16 {
		b[i] = hex[hi>>(60-4*i)&0xf]
		b[16+i] = hex[lo>>(60-4*i)&0xf]
	}
	return string(b[:])
}

// RequestID returns the id of the request w answers, as RequestLog gave
// it; "" when the request is not logged.
func RequestID(w http.ResponseWriter) string {
	if sw := logged(w); sw != nil {
		return sw.id
	}
	return ""
}
