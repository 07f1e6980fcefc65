// Package userapi is a Go client of the user synchronisation API
// (Interface B): typed calls for its three operations, errors that carry
// the server's status, code and message, and Sync, the documented
// pre-check pattern (get by username, then create or update) that leaves
// an unchanged user untouched.
//
//	c, err := userapi.New("https://users.example.com", accountID, os.Getenv("PROCURE_API_KEY"))
//	outcome, u, err := c.Sync(ctx, user.Input{Username: new("jdoe"), Email: new("jdoe@example.com")})
//
// The API key is sent in the Service-API-Key header of every request and
// never appears in an error or a log line of this package.
package userapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/user"
)

// The error codes of the user API this package maps to sentinel errors
// (the OpenAPI document at /v1/openapi.json lists them all).
const (
	CodeInvalidParameter  = "INVALID_PARAMETER"
	CodeInvalidField      = "INVALID_FIELD"
	CodeMalformedRequest  = "MALFORMED_REQUEST"
	CodeDuplicateUsername = "DUPLICATE_USERNAME"
	CodeDuplicateID       = "DUPLICATE_ID"
	CodeUnauthorized      = "UNAUTHORIZED"
	CodeUserNotFound      = "USER_NOT_FOUND"
)

// maxResponseBytes bounds what the client reads of a response body; a user
// is a few kilobytes at most.
const maxResponseBytes = 4 << 20

// Client calls the user API of one service account. It is safe for
// concurrent use.
type Client struct {
	base      string // scheme://host[/prefix], without a trailing slash
	account   string
	key       string
	hc        *http.Client
	userAgent string
	autoRoles map[string]bool
}

// Option configures a Client.
type Option func(*Client)

// DefaultTimeout bounds each call of a Client made without WithHTTPClient,
// from sending the request to reading the whole answer.
const DefaultTimeout = 30 * time.Second

// WithHTTPClient makes the client send its requests with hc (for its
// timeout, transport, proxy or TLS settings). The default is a client on
// http.DefaultTransport with a timeout of DefaultTimeout (never
// http.DefaultClient, which waits for ever).
//
// Whatever hc's own redirect policy, the Client follows a redirect only
// within the origin (scheme, host and port) of its base URL: the API key
// travels in a custom header, which net/http copies to any host a
// redirect names. A redirect elsewhere is an error, and the key is not
// sent. hc itself is not modified.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithUserAgent sets the User-Agent header of every request.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// WithAutoRoles names the role codes the community adds to every user
// created or updated through the API, for a server that does not announce
// them (this module's server does, in the pre-check's Procure-Auto-Roles
// header, and Sync uses those as well). Sync accounts for them when it
// compares roles, so that a user whose only difference is an auto-role is
// left untouched (the server would add it back anyway).
func WithAutoRoles(codes ...string) Option {
	return func(c *Client) {
		for _, r := range codes {
			if r = strings.TrimSpace(r); r != "" {
				c.autoRoles[r] = true
			}
		}
	}
}

// New returns a client of the user API at baseURL (the service host of the
// region, e.g. "https://users.example.com"; the paths' /v1 is added) for
// the service account accountID with its API key.
func New(baseURL, accountID, apiKey string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	switch {
	case err != nil:
		return nil, fmt.Errorf("userapi: base URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("userapi: base URL %q: the scheme must be http or https", baseURL)
	case u.Host == "":
		return nil, fmt.Errorf("userapi: base URL %q: no host", baseURL)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return nil, fmt.Errorf("userapi: base URL %q: must not carry a query, fragment or user info", baseURL)
	case strings.TrimSpace(accountID) == "":
		return nil, errors.New("userapi: the service account id is required")
	case apiKey == "":
		return nil, errors.New("userapi: the API key is required")
	}
	c := &Client{
		base:      strings.TrimRight(u.String(), "/"),
		account:   strings.TrimSpace(accountID),
		key:       apiKey,
		userAgent: "procurekit-userapi/1",
		autoRoles: map[string]bool{},
	}
	for _, o := range opts {
		o(c)
	}
	var hc http.Client // a copy: the caller's client keeps its own policy
	if c.hc != nil {
		hc = *c.hc
	} else {
		hc.Timeout = DefaultTimeout
	}
	hc.CheckRedirect = sameOrigin(u, hc.CheckRedirect)
	c.hc = &hc
	return c, nil
}

// ErrRedirect is returned (wrapped in a *url.Error) when the server
// redirects a request to another origin than the base URL's: the client
// does not follow, so the API key is not sent there.
var ErrRedirect = errors.New("userapi: refusing to follow a redirect to another origin (the API key would go with it)")

// sameOrigin is a CheckRedirect that stops any redirect leaving base's
// scheme, host and port, then defers to next (the caller's policy, or
// net/http's default of at most 10 redirects).
func sameOrigin(base *url.URL, next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	scheme, host := strings.ToLower(base.Scheme), canonicalHost(base)
	return func(req *http.Request, via []*http.Request) error {
		if strings.ToLower(req.URL.Scheme) != scheme || canonicalHost(req.URL) != host {
			// Drop the key from the request net/http prepared, in case a
			// caller's transport looks at it after this error.
			req.Header.Del(auth.HeaderAPIKey)
			return ErrRedirect
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("userapi: stopped after 10 redirects")
		}
		return nil
	}
}

// canonicalHost is u's host in lower case with the scheme's default port
// made explicit, so that "HOST" and "host:443" are one origin.
func canonicalHost(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}

// Error is a response of the user API other than 200: its status and the
// code and message of its body. It matches (errors.Is) user.ErrNotFound,
// user.ErrDuplicateUsername and user.ErrDuplicateID by code,
// auth.ErrUnauthenticated for a 401, and procure.ErrInvalid for the 400s
// that say the request broke a rule.
type Error struct {
	Status  int    // the HTTP status
	Code    string // the body's code, e.g. USER_NOT_FOUND; empty when the body had none
	Message string // the body's message, or the status text
}

func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("user API: %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("user API: %d %s: %s", e.Status, e.Code, e.Message)
}

// Is reports whether target is the sentinel error e stands for.
func (e *Error) Is(target error) bool {
	switch target {
	case user.ErrNotFound:
		return e.Code == CodeUserNotFound
	case user.ErrDuplicateUsername:
		return e.Code == CodeDuplicateUsername
	case user.ErrDuplicateID:
		return e.Code == CodeDuplicateID
	case auth.ErrUnauthenticated:
		return e.Status == http.StatusUnauthorized
	case procure.ErrInvalid:
		return e.Code == CodeInvalidField || e.Code == CodeMalformedRequest || e.Code == CodeInvalidParameter
	}
	return false
}

// IsNotFound reports whether err says the user does not exist.
func IsNotFound(err error) bool { return errors.Is(err, user.ErrNotFound) }

// Retryable reports whether a failed call may succeed if repeated: a
// network failure (no response, a broken connection, a timeout of the
// HTTP client), a 5xx, or a 429. A 4xx other than 429, a local validation
// error, ErrIDMismatch and a cancelled context are not. A caller whose own
// context has expired should stop regardless.
func Retryable(err error) bool {
	var e *Error
	var ve *procure.ValidationError
	switch {
	case err == nil:
		return false
	case errors.As(err, &e):
		return e.Status >= 500 || e.Status == http.StatusTooManyRequests
	case errors.As(err, &ve), errors.Is(err, ErrIDMismatch), errors.Is(err, context.Canceled):
		return false
	}
	return true
}

// GetByUsername returns the user with that username (the server compares
// case-insensitively). No such user is an *Error matching user.ErrNotFound.
func (c *Client) GetByUsername(ctx context.Context, username string) (user.User, error) {
	if strings.TrimSpace(username) == "" {
		return user.User{}, procure.Invalid(procure.SourcePath, "username", "is required")
	}
	u, _, err := c.do(ctx, http.MethodGet, "/v1/users/username/"+url.PathEscape(username), nil)
	return u, err
}

// headerAutoRoles is the response header of the pre-check in which the
// server lists the community's auto-roles (httpapi.HeaderAutoRoles).
const headerAutoRoles = "Procure-Auto-Roles"

// getForSync is GetByUsername that also returns the auto-roles the server
// announced, and whether it announced any list at all (a server of
// another implementation does not).
func (c *Client) getForSync(ctx context.Context, username string) (user.User, []string, bool, error) {
	u, h, err := c.do(ctx, http.MethodGet, "/v1/users/username/"+url.PathEscape(username), nil)
	if err != nil {
		return u, nil, false, err
	}
	vals, ok := h[headerAutoRoles]
	if !ok {
		return u, nil, false, nil
	}
	var roles []string
	for _, v := range vals {
		for part := range strings.SplitSeq(v, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			r, err := url.QueryUnescape(part)
			if err != nil {
				return u, nil, false, nil // not ours to read: as if not announced
			}
			roles = append(roles, r)
		}
	}
	return u, roles, true, nil
}

// Create creates a user and returns it as the server stored it (with its
// id, trimmed text and any auto-roles).
func (c *Client) Create(ctx context.Context, in user.Input) (user.User, error) {
	return c.send(ctx, http.MethodPost, in)
}

// Update changes the user whose id in carries: fields present in in
// replace the stored ones, omitted fields keep their value. It returns the
// user as stored.
func (c *Client) Update(ctx context.Context, in user.Input) (user.User, error) {
	return c.send(ctx, http.MethodPut, in)
}

func (c *Client) send(ctx context.Context, method string, in user.Input) (user.User, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return user.User{}, fmt.Errorf("userapi: encode user: %w", err)
	}
	u, _, err := c.do(ctx, method, "/v1/users", body)
	return u, err
}

// do sends one request and decodes a 200 into a user (returned with the
// response's header), anything else into an *Error.
func (c *Client) do(ctx context.Context, method, path string, body []byte) (user.User, http.Header, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return user.User{}, nil, fmt.Errorf("userapi: %w", err)
	}
	h := req.Header
	h["Service-Account-Id"] = []string{c.account}
	h["Service-Api-Key"] = []string{c.key}
	h["Accept"] = []string{"application/json"}
	if c.userAgent != "" {
		h["User-Agent"] = []string{c.userAgent}
	}
	if body != nil {
		h["Content-Type"] = []string{"application/json; charset=utf-8"}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		// A *url.Error: method, URL and cause; the key is only in a header.
		return user.User{}, nil, err
	}
	defer func() {
		// Drain what is left so that the connection is reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
		resp.Body.Close()
	}()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return user.User{}, nil, fmt.Errorf("userapi: %s %s: read response: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return user.User{}, nil, responseError(resp.StatusCode, data)
	}
	var u user.User
	if err := json.Unmarshal(data, &u); err != nil {
		return user.User{}, nil, fmt.Errorf("userapi: %s %s: decode user: %w", method, path, err)
	}
	return u, resp.Header, nil
}

// responseError builds the *Error of a non-200 response.
func responseError(status int, body []byte) *Error {
	var eb struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &eb) == nil && eb.Code != "" {
		return &Error{Status: status, Code: eb.Code, Message: eb.Message}
	}
	// Not our error body (a proxy's page, say): keep a short excerpt.
	msg := http.StatusText(status)
	if s := strings.TrimSpace(string(body)); s != "" {
		if len(s) > 200 {
			s = s[:200] + "..."
		}
		msg += ": " + s
	}
	return &Error{Status: status, Message: msg}
}

// scimErrorSchema marks the error body of a SCIM endpoint (RFC 7644
// section 3.12).
const scimErrorSchema = "urn:ietf:params:scim:api:messages:2.0:Error"

// usernameOf asks the SCIM endpoint beside the user API for the user with
// that id (Resolve): its username, or found false when the endpoint
// answers that no such user exists. An answer that is not the SCIM
// endpoint's - a 404 without its error body, a 405 or a 501 - is
// ErrNoIDLookup; any other failure an *Error with the status and the
// SCIM detail.
func (c *Client) usernameOf(ctx context.Context, id string) (username string, found bool, err error) {
	path := "/scim/v2/Users/" + url.PathEscape(id)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return "", false, fmt.Errorf("userapi: %w", err)
	}
	h := req.Header
	h["Authorization"] = []string{"Bearer " + c.key}
	h["Accept"] = []string{"application/scim+json, application/json"}
	if c.userAgent != "" {
		h["User-Agent"] = []string{c.userAgent}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", false, err // a *url.Error; the key is only in a header
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
		resp.Body.Close()
	}()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return "", false, fmt.Errorf("userapi: GET %s: read response: %w", path, err)
	}
	var body struct {
		Schemas  []string `json:"schemas"`
		ID       string   `json:"id"`
		UserName string   `json:"userName"`
		Detail   string   `json:"detail"`
	}
	scim := json.Unmarshal(data, &body) == nil
	isError := scim && slices.Contains(body.Schemas, scimErrorSchema)
	switch {
	case resp.StatusCode == http.StatusOK && scim && body.UserName != "":
		return body.UserName, true, nil
	case resp.StatusCode == http.StatusOK:
		return "", false, fmt.Errorf("userapi: GET %s: the answer is not a SCIM user", path)
	case resp.StatusCode == http.StatusNotFound && isError:
		return "", false, nil
	case resp.StatusCode == http.StatusNotFound, resp.StatusCode == http.StatusMethodNotAllowed, resp.StatusCode == http.StatusNotImplemented:
		return "", false, ErrNoIDLookup
	case isError && body.Detail != "":
		return "", false, &Error{Status: resp.StatusCode, Message: "SCIM: " + body.Detail}
	}
	return "", false, responseError(resp.StatusCode, data)
}
