package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// ReadBody reads the JSON body of r, whose Content-Type the caller has
// accepted, for the user, SCIM and admin APIs alike: at most max bytes
// (a larger body, declared or sent, is a 413 PAYLOAD_TOO_LARGE), read
// whole (a client that goes away or sends a broken chunked body is a 400),
// not empty or only white space (a 400 saying the API wants what, such as
// "a JSON User object"; ErrEmptyBody itself when what is ""), and valid
// UTF-8 (a 400:
// RFC 8259 makes JSON UTF-8, and encoding/json would quietly turn bad
// bytes into U+FFFD, so that what is stored would not be what was sent;
// docs: limits.md). Every refusal is an *Error with MALFORMED_REQUEST or
// PAYLOAD_TOO_LARGE.
//
// The body is read into a pooled buffer: it stays valid until the caller
// calls release, after decoding it.
func ReadBody(w http.ResponseWriter, r *http.Request, max int64, what string) (body []byte, release func(), err error) {
	tooLarge := NewError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
		"the request body is larger than "+strconv.FormatInt(max, 10)+" bytes"+inMiB(max))
	if r.ContentLength > max {
		return nil, nil, tooLarge
	}
	buf := BufPool.Get().(*bytes.Buffer)
	buf.Reset()
	release = func() {
		if buf.Cap() <= int(max)+bytes.MinRead {
			BufPool.Put(buf)
		}
	}
	fail := func(err error) ([]byte, func(), error) {
		release()
		return nil, nil, err
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, max)); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return fail(tooLarge)
		}
		return fail(NewError(http.StatusBadRequest, CodeMalformedRequest, "the request body could not be read"))
	}
	body = buf.Bytes()
	if len(bytes.TrimSpace(body)) == 0 {
		if what == "" {
			return fail(ErrEmptyBody)
		}
		return fail(NewError(http.StatusBadRequest, CodeMalformedRequest, "the request body is empty: send "+what))
	}
	if !utf8.Valid(body) {
		return fail(NewError(http.StatusBadRequest, CodeMalformedRequest, "the request body is not valid UTF-8 (JSON must be UTF-8)"))
	}
	return body, release, nil
}

// ErrEmptyBody is ReadBody's refusal of an empty body when the caller
// names nothing it wants instead; a caller to whom no body means
// something compares it.
var ErrEmptyBody = NewError(http.StatusBadRequest, CodeMalformedRequest, "the request body is empty")

// inMiB is " (n MiB)" for a size of whole mebibytes, which people read
// more easily than the bytes.
func inMiB(n int64) string {
	if n <= 0 || n%(1<<20) != 0 {
		return ""
	}
	return " (" + strconv.FormatInt(n>>20, 10) + " MiB)"
}

// ErrNotJSON is the 415 of a body whose Content-Type is not JSON
// (IsJSONContentType).
var ErrNotJSON = NewError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
	"the request body must be JSON: send Content-Type: application/json (charset, if given, utf-8)")

// MalformedJSON is the 400 MALFORMED_REQUEST of a body that is not JSON,
// when err, from decoding body, says so: a syntax error, named with its
// line and column, or a document that ends too early. It is nil for any
// other error, which the API phrases itself (a wrong JSON type names a
// field of the API's own types).
func MalformedJSON(err error, body []byte) error {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return NewError(http.StatusBadRequest, CodeMalformedRequest,
			"the request body is not valid JSON: "+syn.Error()+" (at "+LineColumn(body, syn.Offset-1)+")")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return NewError(http.StatusBadRequest, CodeMalformedRequest, "the request body is not valid JSON: it ends too early")
	}
	return nil
}
