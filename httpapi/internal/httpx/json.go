package httpx

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
)

// HdrJSON is the Content-Type of every JSON answer.
var HdrJSON = []string{"application/json"}

// BufPool holds buffers for encoding answers and reading bodies.
var BufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// JSONAppender is a value that encodes itself, without reflection, to
// exactly the JSON encoding/json writes for it (user.User): WriteJSON
// calls it instead of an Encoder.
type JSONAppender interface {
	AppendJSON(b []byte) []byte
}

// WriteJSON encodes v into a pooled buffer first, so that an encoding
// failure can still become a clean 500 and the response carries a
// Content-Length.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	buf := BufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 1<<20 { // don't keep huge buffers alive
			BufPool.Put(buf)
		}
	}()
	if a, ok := v.(JSONAppender); ok {
		// The same bytes as the Encoder's, newline included.
		b := append(a.AppendJSON(buf.AvailableBuffer()), '\n')
		buf.Write(b)
	} else if err := json.NewEncoder(buf).Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"code":"` + CodeInternal + `","message":"internal server error"}` + "\n")
	}
	h := w.Header()
	h["Content-Type"] = HdrJSON
	h["Content-Length"] = ContentLength(buf.Len())
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // the client has gone; nothing to do
}

// lengthValue is a Content-Length header value ready to assign.
type lengthValue struct {
	n int
	v []string
}

// lengthCache remembers recent Content-Length values by length, one per
// slot, so that the answers a server gives over and over (the same page,
// the same supplier) set the header without allocating. A slot holds the
// last length that hashed to it; entries are immutable once published.
var lengthCache [4096]atomic.Pointer[lengthValue]

// ContentLength returns the header value of Content-Length n. The slice
// is shared: callers assign it to a header and never modify it (net/http
// only reads it).
func ContentLength(n int) []string {
	slot := &lengthCache[uint(n)%uint(len(lengthCache))]
	if e := slot.Load(); e != nil && e.n == n {
		return e.v
	}
	e := &lengthValue{n: n, v: []string{strconv.Itoa(n)}}
	slot.Store(e)
	return e.v
}
