package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// adminPrefix is where the server mounts the admin API
// (httpapi.AdminBasePath; not imported, so that the command depends on
// the protocol only).
const adminPrefix = "/admin/v1"

// maxAnswerBytes bounds what procurectl reads of one answer.
const maxAnswerBytes = 64 << 20

// client calls the admin API with the admin token.
type client struct {
	base  string // scheme://host[:port]/.../admin/v1, no trailing slash
	token string
	http  *http.Client
}

// newClient is a client for e's server with the token from the
// environment; timeout bounds each request (0: none).
func (e *env) newClient(timeout time.Duration) (*client, error) {
	token := e.getenv(envToken)
	if token == "" {
		return nil, fmt.Errorf("%s is not set: export the server's admin token (it is never taken from a flag)", envToken)
	}
	base, err := adminBase(e.server)
	if err != nil {
		return nil, err
	}
	return &client{base: base, token: token, http: &http.Client{Timeout: timeout}}, nil
}

// adminBase turns -server into the admin API's base URL: an absolute http
// or https URL, with /admin/v1 added unless it ends with it.
func adminBase(server string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(server))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("-server %q: want an http or https URL such as %s", server, defaultServer)
	}
	if u.User != nil {
		return "", fmt.Errorf("-server: a URL with credentials is refused; the admin token comes from %s", envToken)
	}
	u.RawQuery, u.Fragment = "", ""
	base := strings.TrimSuffix(u.String(), "/")
	if !strings.HasSuffix(base, adminPrefix) {
		base += adminPrefix
	}
	return base, nil
}

// path joins escaped segments into a path under the base.
func path(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// serverError is an answer outside 2xx: its status and the JSON error
// body's code and message.
type serverError struct {
	method, path string
	status       int
	code         string
	message      string
}

func (e *serverError) Error() string {
	s := fmt.Sprintf("%s %s: %d %s", e.method, e.path, e.status, http.StatusText(e.status))
	if e.code != "" {
		s += " (" + e.code + ")"
	}
	if e.message != "" {
		s += ": " + e.message
	}
	return s
}

// do sends body (JSON; nil for none) and returns the answer's body when
// the status is 2xx, a *serverError otherwise.
func (c *client) do(ctx context.Context, method, p string, body []byte) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	return c.send(ctx, method, p, rd, int64(len(body)))
}

// send is do with a streamed body of size bytes (-1: unknown).
func (c *client) send(ctx context.Context, method, p string, body io.Reader, size int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+p, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	res, err := c.http.Do(req)
	if err != nil {
		// The url.Error names the URL, which holds no secret.
		return nil, err
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", method, req.URL.Path, err)
	}
	if res.StatusCode/100 == 2 {
		return answer, nil
	}
	se := &serverError{method: method, path: req.URL.Path, status: res.StatusCode}
	var eb struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(answer, &eb) == nil && eb.Code != "" {
		se.code, se.message = eb.Code, eb.Message
	} else {
		se.message = shorten(strings.TrimSpace(string(answer)), 200)
	}
	return nil, se
}

// shorten cuts s to n bytes at most, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}

// asServerError returns err as a *serverError, if it is one.
func asServerError(err error) (*serverError, bool) {
	var se *serverError
	ok := errors.As(err, &se)
	return se, ok
}
