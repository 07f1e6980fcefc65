package httpx

import (
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
)

// LogHandler is a slog.TextHandler or slog.JSONHandler (NewLogHandler)
// that writes Observe's request lines itself, byte for byte as the slog
// handler would, without building a slog.Record: a request line through
// slog cost 1.4 µs of a 24 µs supplier read at 50,000 requests a second
// (6% of the server's CPU; bench/README.md, session 18), most of it the
// record's sixth attribute (which slog allocates for) and the handler's
// generic walk over the attributes, options and groups.
//
// Every other record goes to the slog handler unchanged, and so does a
// request line whose texts need quoting or escaping (a caller's request
// id with a space, say) or whose time or duration slog would write
// differently: the fast path takes only what it can write exactly as
// slog does (TestLogHandlerMatchesSlog compares the two, both formats).
// Enabled, Handle, WithAttrs and WithGroup are the embedded slog
// handler's: WithAttrs and WithGroup return its own result, since the
// fast path knows nothing of added attributes.
type LogHandler struct {
	slog.Handler
	w    *lockedWriter
	json bool
	// fast is false when the options change what slog writes
	// (ReplaceAttr, AddSource): every line then goes through slog.
	fast bool
}

// lockedWriter serializes the writes of the slog handler and the fast
// path, as the slog handler's own lock serializes its writes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// NewLogHandler returns a slog handler writing to w: slog.NewJSONHandler's
// when json is true, else slog.NewTextHandler's, with opts (nil: the
// defaults), whose request lines from Observe take the fast path.
func NewLogHandler(w io.Writer, opts *slog.HandlerOptions, json bool) *LogHandler {
	lw := &lockedWriter{w: w}
	h := &LogHandler{w: lw, json: json}
	if opts == nil {
		opts = &slog.HandlerOptions{}
	}
	if json {
		h.Handler = slog.NewJSONHandler(lw, opts)
	} else {
		h.Handler = slog.NewTextHandler(lw, opts)
	}
	h.fast = opts.ReplaceAttr == nil && !opts.AddSource
	return h
}

// lineBufs keeps the fast path's buffers.
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// requestLine is what Observe logs of a request.
type requestLine struct {
	end                          time.Time
	id, method, route, community string
	status                       int
	durationMS                   float64
}

// writeRequest writes l as a record of level Info and message "request"
// with l's attributes in Observe's order, and reports whether it did:
// false when the line needs what only slog does (the caller then logs
// it through slog). The level was checked by the caller.
func (h *LogHandler) writeRequest(l *requestLine) bool {
	if !h.fast || !plainText(l.id) || !plainText(l.method) || !plainText(l.route) ||
		!plainOrEmpty(l.community) {
		return false
	}
	if y := l.end.Year(); y < 1000 || y > 9999 {
		return false // slog writes an error (JSON) or more digits
	}
	bp := lineBufs.Get().(*[]byte)
	defer lineBufs.Put(bp)
	b := (*bp)[:0]
	var ok bool
	if h.json {
		b, ok = appendJSONLine(b, l)
	} else {
		b, ok = appendTextLine(b, l)
	}
	if !ok {
		return false
	}
	*bp = b
	_, _ = h.w.Write(b) // as slog's: a write error has nowhere to go
	return true
}

func appendTextLine(b []byte, l *requestLine) ([]byte, bool) {
	if math.IsNaN(l.durationMS) || math.IsInf(l.durationMS, 0) {
		return b, false
	}
	b = append(b, "time="...)
	b = appendMillis(b, l.end)
	b = append(b, " level=INFO msg=request request_id="...)
	b = append(b, l.id...)
	b = append(b, " method="...)
	b = append(b, l.method...)
	b = append(b, " route="...)
	b = append(b, l.route...)
	b = append(b, " status="...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, " duration_ms="...)
	b = strconv.AppendFloat(b, l.durationMS, 'g', -1, 64)
	b = append(b, " community="...)
	if l.community == "" {
		b = append(b, `""`...)
	} else {
		b = append(b, l.community...)
	}
	return append(b, '\n'), true
}

// appendMillis appends t as slog's text handler writes it: RFC 3339 in
// t's location, to the millisecond with three digits. time.AppendFormat
// is fast for time.RFC3339 alone (a layout of one's own is parsed at
// every call: 2.5 times as long), so the milliseconds go in after it.
// t's year has four digits (writeRequest).
func appendMillis(b []byte, t time.Time) []byte {
	n := len(b)
	b = t.AppendFormat(b, time.RFC3339)
	const secondsEnd = len("2006-01-02T15:04:05")
	var zone [len("-07:00")]byte
	k := copy(zone[:], b[n+secondsEnd:])
	ms := t.Nanosecond() / int(time.Millisecond)
	b = append(b[:n+secondsEnd], '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(b, zone[:k]...)
}

func appendJSONLine(b []byte, l *requestLine) ([]byte, bool) {
	// slog writes a float as encoding/json does: 'f' format from 1e-6 to
	// 1e21, exponents outside (left to slog).
	if a := math.Abs(l.durationMS); a != 0 && (a < 1e-6 || a >= 1e21) || math.IsNaN(l.durationMS) {
		return b, false
	}
	b = append(b, `{"time":"`...)
	b = l.end.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","request_id":"`...)
	b = append(b, l.id...)
	b = append(b, `","method":"`...)
	b = append(b, l.method...)
	b = append(b, `","route":"`...)
	b = append(b, l.route...)
	b = append(b, `","status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendFloat(b, l.durationMS, 'f', -1, 64)
	b = append(b, `,"community":"`...)
	b = append(b, l.community...)
	return append(b, "\"}\n"...), true
}

// plainText reports whether s is written as is by both handlers: not
// empty (the text handler quotes "") and of bytes neither quotes nor
// escapes. The set is narrower than slog's (no other punctuation, no
// UTF-8): what it leaves out goes through slog, which is never wrong.
func plainText(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if !plainByte[s[i]] {
			return false
		}
	}
	return true
}

func plainOrEmpty(s string) bool { return s == "" || plainText(s) }

// plainByte is the bytes of plainText: letters, digits and - . _ / : { } ~.
var plainByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._/:{}~" {
		t[c] = true
	}
	return t
}()
