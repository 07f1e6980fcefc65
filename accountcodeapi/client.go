// Package accountcodeapi is a Go client of account code validation
// (Interface C, docs/account-codes.md): the platform's side of the XML
// exchange, a budget.Validator that asks the customer's finance system,
// or the connector that answers for it, whether the account codes and
// amounts of a requisition's lines are acceptable.
//
//	v, err := accountcodeapi.New("https://finance.example.com/account-code-validation",
//		accountcodeapi.Options{Token: os.Getenv("PROCURE_CONNECTOR_TOKEN")})
//	gate, err := budget.NewGate(v, budget.GateConfig{Community: "c-1"})
//
// One package per interface, as package userapi is the client of
// Interface B: the two clients share nothing but the module. They speak
// different formats (JSON with service-account keys, XML with a bearer
// token) in opposite directions (the user API is served by this module
// and called by a customer's directory; the account code check is served
// by the customer and called by the platform), so a program needs one or
// the other, and each package's name says which interface it speaks. The
// XML codec is shared with the connector's handler (httpapi's
// AccountCodeHandler) in an internal package, so that both sides read and
// write one format.
//
// The client was httpapi's AccountCodeClient; httpapi keeps those names
// as deprecated aliases of these, which is why Options is a struct rather
// than userapi's functional options.
package accountcodeapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/internal/acxml"
)

// DefaultTimeout bounds one call of the finance system unless configured
// otherwise. A buyer is waiting at checkout.
const DefaultTimeout = 10 * time.Second

// DefaultMaxReplyBytes bounds a reply unless configured otherwise: 1 MiB,
// some ten thousand lines (budget.MaxLines), as the connector bounds a
// request.
const DefaultMaxReplyBytes = 1 << 20

// Options configures a Client.
type Options struct {
	// HTTPClient sends the requests; nil means a client on
	// http.DefaultTransport that follows no redirects (a redirected POST of
	// financial data is a configuration mistake, reported as such). A
	// client given here keeps its own redirect policy; its Timeout, if
	// any, applies on top of Timeout below.
	HTTPClient *http.Client

	// Timeout bounds each call, from sending the request to reading the
	// whole reply; 0 means DefaultTimeout, negative means no
	// bound beyond the caller's context.
	Timeout time.Duration

	// MaxReplyBytes bounds the reply body; 0 means DefaultMaxReplyBytes.
	// A longer reply is malformed.
	MaxReplyBytes int64

	// Header is added to every request: credentials the finance system
	// asks for, for example. Its values never appear in an error.
	Header http.Header

	// Token, when set, is sent as "Authorization: Bearer <Token>" on every
	// request: the connector's secret (PROCURE_CONNECTOR_TOKEN,
	// docs/account-codes.md "Connector callers"). It never appears in an
	// error, and it replaces any Authorization in Header.
	Token string
}

// Client is the platform's side of Interface C: a budget.Validator that
// asks the customer's finance system (or a connector) over HTTP with the
// XML exchange of docs/account-codes.md.
//
// Validate POSTs an AccountCodeValidationRequest with Content-Type
// application/xml; charset=utf-8 and reads the AccountCodeValidationResponse
// strictly. Its errors never let a checkout proceed and say what went
// wrong, classified with the sentinels of package budget:
//   - budget.ErrTimeout (which matches budget.ErrUnavailable too): no
//     complete answer within the timeout or the context's deadline;
//   - budget.ErrUnavailable: the connection failed, or the answer's status
//     was not 2xx (the error names the status, and the connector's error
//     code and message when the body carries them);
//   - budget.ErrMalformedReply: the reply is not XML, has another root
//     element or content type, is larger than the limit, lacks an element,
//     or does not answer every request line exactly once with a known
//     status (budget.CheckReply).
//
// Results come back in the order of the request's lines, with messages cut
// to budget.MaxMessageLength characters. Release and Confirm send a
// requisition's AccountCodeReleaseRequest and AccountCodeConfirmRequest
// (the Client is a budget.Committer, so a budget.Gate over it can end or
// keep a requisition's holds). A Client is safe for concurrent use.
type Client struct {
	url      string
	redacted string // the URL without a password, for errors
	http     *http.Client
	timeout  time.Duration
	maxReply int64
	header   http.Header
}

var _ budget.Validator = (*Client)(nil)

var noRedirects = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// New returns a client for the finance system at rawURL, an absolute http
// or https URL such as https://finance.example.com/account-code-validation.
func New(rawURL string, opts Options) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("accountcodeapi: the finance system URL does not parse")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("accountcodeapi: the finance system URL %s must be an absolute http or https URL", u.Redacted())
	}
	c := &Client{
		url:      u.String(),
		redacted: u.Redacted(),
		http:     opts.HTTPClient,
		timeout:  opts.Timeout,
		maxReply: opts.MaxReplyBytes,
		header:   opts.Header.Clone(),
	}
	if opts.Token != "" {
		if c.header == nil {
			c.header = http.Header{}
		}
		c.header.Set("Authorization", "Bearer "+opts.Token)
	}
	if c.http == nil {
		c.http = noRedirects
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxReply <= 0 {
		c.maxReply = DefaultMaxReplyBytes
	}
	return c, nil
}

// errReplyTooLarge is what the reply reader returns past the limit.
var errReplyTooLarge = errors.New("reply too large")

// Validate asks the finance system about req.
func (c *Client) Validate(ctx context.Context, req budget.Request) ([]budget.Result, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("account code check: %w", err)
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	// The body is not pooled: the transport may still hold it after Do
	// returns.
	body := acxml.AppendRequest(make([]byte, 0, 160+len(req.Lines)*96), &req)
	var results []budget.Result
	err := c.exchange(ctx, acxml.Check, body, func(r io.Reader) (err error) {
		results, err = acxml.DecodeResponse(r)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := budget.CheckReply(req, results); err != nil {
		return nil, fmt.Errorf("account code check at %s: %w", c.redacted, err)
	}
	return results, nil
}

// Release asks the connector to end every hold and commitment of
// requisition (it was cancelled, rejected or changed) with an
// AccountCodeReleaseRequest, and returns how many holds it ended: 0 for a
// requisition that holds nothing. Errors are Validate's, and a connector
// that keeps no holds (it answers 501) is an error matching
// budget.ErrUnsupported. A requisition that is blank or over
// budget.MaxRequisitionIDLength characters is refused before sending
// (procure.ErrInvalid).
func (c *Client) Release(ctx context.Context, requisition string) (int, error) {
	return c.commit(ctx, acxml.Release, requisition)
}

// Confirm asks the connector to turn requisition's holds into commitments
// (a purchase order was issued) with an AccountCodeConfirmRequest, and
// returns how many holds it confirmed. Errors are Release's.
func (c *Client) Confirm(ctx context.Context, requisition string) (int, error) {
	return c.commit(ctx, acxml.Confirm, requisition)
}

var _ budget.Committer = (*Client)(nil)

func (c *Client) commit(ctx context.Context, kind acxml.Kind, requisition string) (int, error) {
	if err := budget.ValidateRequisitionID(requisition); err != nil {
		return 0, fmt.Errorf("account code %s: %w", kind.Root(), err)
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	var n int
	err := c.exchange(ctx, kind, acxml.AppendCommitRequest(nil, kind, requisition), func(r io.Reader) (err error) {
		n, err = acxml.DecodeCommitResponse(r, kind, requisition)
		return err
	})
	return n, err
}

// exchange POSTs body, a message of kind, and has decode read a successful
// reply, classifying every failure with the sentinels of package budget
// (see Client).
func (c *Client) exchange(ctx context.Context, kind acxml.Kind, body []byte, decode func(io.Reader) error) error {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: account code check at %s: %w", budget.ErrUnavailable, c.redacted, err)
	}
	for k, vs := range c.header {
		hreq.Header[k] = vs
	}
	hreq.Header.Set("Content-Type", "application/xml; charset=utf-8")
	hreq.Header.Set("Accept", "application/xml")

	resp, err := c.http.Do(hreq)
	if err != nil {
		return c.transportError(ctx, "", err)
	}
	defer func() {
		// Drain a little so that the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.statusError(resp, kind)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !isXMLMediaType(mt) {
			return fmt.Errorf("%w: account code check at %s: the reply's content type is %s, not XML",
				budget.ErrMalformedReply, c.redacted, acxml.Quote(ct))
		}
	}
	if resp.ContentLength > c.maxReply {
		return c.tooLarge()
	}
	if err := decode(&limitedReader{r: resp.Body, n: c.maxReply}); err != nil {
		switch {
		case errors.Is(err, errReplyTooLarge):
			return c.tooLarge()
		case errors.Is(err, budget.ErrMalformedReply):
			return fmt.Errorf("account code check at %s: %w", c.redacted, err)
		}
		return c.transportError(ctx, "reading the reply: ", err)
	}
	return nil
}

// transportError classifies a failure to send or to read: a timeout, or
// the finance system being unreachable.
func (c *Client) transportError(ctx context.Context, doing string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is named once, redacted, below
	}
	var timeout interface{ Timeout() bool }
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &timeout) && timeout.Timeout()) {
		return fmt.Errorf("%w: account code check at %s: %s%w", budget.ErrTimeout, c.redacted, doing, err)
	}
	return fmt.Errorf("%w: account code check at %s: %s%w", budget.ErrUnavailable, c.redacted, doing, err)
}

func (c *Client) tooLarge() error {
	return fmt.Errorf("%w: account code check at %s: the reply is larger than %d bytes",
		budget.ErrMalformedReply, c.redacted, c.maxReply)
}

// statusError describes a non-2xx answer, with the connector's error code
// and message when the body carries them. A 501 to a release or confirm
// matches budget.ErrUnsupported; every other status, and a 501 to a check,
// budget.ErrUnavailable.
func (c *Client) statusError(resp *http.Response, kind acxml.Kind) error {
	detail := ""
	if body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<10)); err == nil {
		if code, msg, ok := acxml.DecodeError(body); ok {
			detail = ": " + code
			if msg != "" {
				detail += ": " + acxml.Quote(msg)
			}
		}
	}
	sentinel := budget.ErrUnavailable
	if resp.StatusCode == http.StatusNotImplemented && kind != acxml.Check {
		// The connector keeps no holds: a fact of its configuration,
		// not an outage.
		sentinel = budget.ErrUnsupported
	}
	return fmt.Errorf("%w: account code check at %s: the finance system answered %s%s",
		sentinel, c.redacted, resp.Status, detail)
}

func isXMLMediaType(mt string) bool {
	return mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml")
}

// limitedReader reads at most n bytes and then fails with errReplyTooLarge
// if more follow (io.LimitReader would end silently, truncating the XML).
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		// Anything more than the limit is too much.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, errReplyTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}
