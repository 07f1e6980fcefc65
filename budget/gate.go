package budget

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
)

// Outcome is what a checkout may do after the account code check
// (docs: account-codes.md "Verdicts", "Outcome of a validation result at requisition checkout").
type Outcome uint8

// The outcomes. The zero Outcome is no decision at all and, like every
// outcome but Proceed, does not let a checkout go on.
const (
	_           Outcome = iota
	Proceed             // every line Valid, or acknowledged warnings recurred: go to the next stage
	HardStop            // a line is Invalid: the buyer must change the accounting data
	SoftStop            // a line has a Warning: show it; an acknowledged retry may proceed
	Unavailable         // the check could not be made: never proceed; try again later
)

// String returns the outcome's name as the demo API spells it:
// "proceed", "hard_stop", "soft_stop" or "unavailable".
func (o Outcome) String() string {
	switch o {
	case Proceed:
		return "proceed"
	case HardStop:
		return "hard_stop"
	case SoftStop:
		return "soft_stop"
	case Unavailable:
		return "unavailable"
	}
	return "undecided"
}

// Buyer-facing summaries of each outcome but Proceed (Decision.Message).
const (
	HardStopMessage    = "Some lines have accounting data that is not accepted. Change the marked lines and check out again."
	SoftStopMessage    = "Please review the warnings on the marked lines. Check out again to proceed."
	UnavailableMessage = "The account code check is unavailable. Please try again later."
)

// Decision is the gate's answer at checkout.
type Decision struct {
	Outcome Outcome

	// Lines holds the verdict on every line, in the order of the
	// request's lines (nil when Unavailable). On HardStop the Invalid
	// lines carry the messages to show, on SoftStop the Warning lines.
	Lines []Result

	// Message is a summary for the buyer: HardStopMessage, SoftStopMessage
	// or UnavailableMessage; empty on Proceed.
	Message string

	// Acknowledgement is set on SoftStop: pass it back with the next
	// checkout of the same lines to proceed past the same warnings. It is
	// opaque, URL-safe text, and not a secret (it is bound to the lines).
	Acknowledgement string

	// Acknowledged is true on Proceed when warnings were present and the
	// buyer's acknowledgement covered them (worth recording for audit).
	Acknowledged bool

	// Cause is set on Unavailable: why the check failed (for logs; it may
	// name the finance system, never show it to the buyer). It matches
	// ErrUnavailable, ErrTimeout or ErrMalformedReply where it can be
	// classified.
	Cause error
}

// CanProceed reports whether the checkout may go on to its next stage.
func (d Decision) CanProceed() bool { return d.Outcome == Proceed }

// GateConfig configures a Gate.
type GateConfig struct {
	// Community is the community whose checkouts the gate decides.
	// Required: every acknowledgement is bound to it, so that one signed
	// for a requisition of one community is worth nothing in another.
	Community string

	// Key signs acknowledgements (HMAC-SHA256); at least 32 bytes, and the
	// same on every node of a cluster that serves one checkout. Nil means a
	// random key made by NewGate: acknowledgements then survive neither a
	// restart nor a hop to another node (the buyer is soft-stopped again,
	// which is safe).
	//
	// One key per deployment is safe: every acknowledgement binds the
	// community and the requisition id (as well as the lines, the context
	// and the warnings), so the gates of all communities may share one key
	// without an acknowledgement carrying over from one community, or one
	// requisition, to another. No per-community key derivation is needed.
	Key []byte

	// PreviousKeys still verify acknowledgements (never sign), so that a
	// key can be rotated without failing the checkouts in flight.
	PreviousKeys [][]byte

	// AckLifetime is how long an acknowledgement stays good; default 30
	// minutes.
	AckLifetime time.Duration

	// Timeout bounds each call of the validator; default 30 seconds,
	// negative means no bound beyond the caller's context. A validator that
	// takes longer makes the decision Unavailable.
	Timeout time.Duration

	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Gate decides checkouts (docs: account-codes.md "Checkout gate"). It is safe for
// concurrent use.
//
// Precedence: any Invalid line is a hard stop; otherwise any Warning is a
// soft stop; otherwise the checkout proceeds. Every attempt re-validates the
// lines: an acknowledgement never skips the check.
//
// A soft stop carries an acknowledgement: an HMAC (with the gate's key)
// over the gate's community and a canonical encoding of the request (each
// line's number, account and
// decimal-normalised amount, so 10.5 and 10.50 are the same, and its
// splits in their order, each with its account and its percentage or
// amount; the order of the lines does not matter; and the requisition id,
// username, organisation unit, finance year and currency), the exact
// warnings shown (line numbers and messages) and an expiry time. It cannot be forged without the key, and it
// is worth nothing for other lines, other amounts, other context or other
// warnings. No server-side state is kept, so any node sharing the key can
// honour it.
//
// A retry with a good acknowledgement proceeds only when it meets exactly
// the warnings that were acknowledged. When the warnings differ in any way
// (a new warning, a changed message, or fewer warnings than were shown),
// the buyer has not seen what now applies: the result is another soft stop
// with a fresh acknowledgement for the current warnings. An expired, forged
// or mismatched acknowledgement counts as none.
type Gate struct {
	v         Validator
	community string
	key       []byte
	verify    [][]byte // key first, then previous keys
	lifetime  time.Duration
	timeout   time.Duration
	now       func() time.Time
}

// NewGate returns a gate that asks v.
func NewGate(v Validator, cfg GateConfig) (*Gate, error) {
	if v == nil {
		return nil, errors.New("budget: NewGate: the validator is nil")
	}
	if cfg.Community == "" {
		return nil, errors.New("budget: NewGate: the community is required (acknowledgements are bound to it)")
	}
	g := &Gate{v: v, community: cfg.Community, lifetime: cfg.AckLifetime, timeout: cfg.Timeout, now: cfg.Now}
	switch {
	case cfg.Key == nil:
		g.key = make([]byte, 32)
		if _, err := rand.Read(g.key); err != nil {
			return nil, fmt.Errorf("budget: NewGate: making a key: %w", err)
		}
	case len(cfg.Key) < 32:
		return nil, fmt.Errorf("budget: NewGate: the acknowledgement key has %d bytes; it needs at least 32", len(cfg.Key))
	default:
		g.key = slices.Clone(cfg.Key)
	}
	g.verify = append(g.verify, g.key)
	for i, k := range cfg.PreviousKeys {
		if len(k) < 32 {
			return nil, fmt.Errorf("budget: NewGate: previous key %d has %d bytes; it needs at least 32", i, len(k))
		}
		g.verify = append(g.verify, slices.Clone(k))
	}
	if g.lifetime <= 0 {
		g.lifetime = 30 * time.Minute
	}
	if g.timeout == 0 {
		g.timeout = 30 * time.Second
	}
	if g.now == nil {
		g.now = time.Now
	}
	return g, nil
}

// Checkout checks req and decides what the checkout may do. ack is the
// Acknowledgement of a previous SoftStop decision for this checkout, or ""
// when there is none.
//
// The error is non-nil only when req itself is unusable (a rule of
// Request.Validate broken: no lines, duplicate line numbers, a blank
// account code, splits that do not add up, an unknown currency; or - when a
// warning needs acknowledging, or ack is given - no RequisitionID, which
// the acknowledgement is bound to): a mistake of the calling code, matching
// procure.ErrInvalid. A finance system that fails, times out
// or replies malformed is not an error but an Unavailable decision. Either
// way the checkout must not proceed unless Decision.CanProceed reports true.
func (g *Gate) Checkout(ctx context.Context, req Request, ack string) (Decision, error) {
	if err := req.Validate(); err != nil {
		return Decision{}, fmt.Errorf("budget: checkout: %w", err)
	}
	if ack != "" && req.RequisitionID == "" {
		return Decision{}, fmt.Errorf("budget: checkout: %w", errNoRequisition)
	}
	// The validator gets its own copy of the lines: what it does to them
	// must not change what the acknowledgement is bound to.
	sent := req
	sent.Lines = slices.Clone(req.Lines)
	results, err := g.ask(ctx, sent)
	if err == nil {
		err = CheckReply(req, results)
	}
	if err != nil {
		return Decision{Outcome: Unavailable, Message: UnavailableMessage, Cause: err}, nil
	}

	var invalid, warning bool
	for _, r := range results {
		switch r.Status {
		case Invalid:
			invalid = true
		case Warning:
			warning = true
		}
	}
	switch {
	case invalid:
		return Decision{Outcome: HardStop, Lines: results, Message: HardStopMessage}, nil
	case !warning:
		return Decision{Outcome: Proceed, Lines: results}, nil
	}
	if req.RequisitionID == "" {
		// Without an id, an acknowledgement would fit every requisition
		// with the same lines.
		return Decision{}, fmt.Errorf("budget: checkout: %w", errNoRequisition)
	}
	now := g.now()
	if ack != "" && g.acknowledged(ack, req, results, now) {
		return Decision{Outcome: Proceed, Lines: results, Acknowledged: true}, nil
	}
	return Decision{
		Outcome:         SoftStop,
		Lines:           results,
		Message:         SoftStopMessage,
		Acknowledgement: g.sign(req, results, now.Add(g.lifetime)),
	}, nil
}

// Release tells the finance system that requisition will not be ordered
// as checked (it was cancelled, rejected or changed), so that what its
// checks hold is free for other requisitions (docs: account-codes.md
// "Release and confirm"). It returns how many holds ended: 0 for a
// requisition that holds nothing. Confirm tells it a purchase order was
// issued, so that the holds become commitments that do not expire.
//
// Both go through the gate's validator, which must be a Committer
// (accountcodeapi.Client is one): otherwise the error matches
// ErrUnsupported. A requisition that is blank or over
// MaxRequisitionIDLength characters is an error matching
// procure.ErrInvalid, and nothing is sent. A finance system that fails or
// times out is an error matching ErrUnavailable (or ErrTimeout): the holds
// are then as they were, and a release left undone ends when the holds
// expire, while a confirm should be retried before they do.
func (g *Gate) Release(ctx context.Context, requisition string) (int, error) {
	return g.commit(ctx, "release", requisition, Committer.Release)
}

// Confirm is described with Release.
func (g *Gate) Confirm(ctx context.Context, requisition string) (int, error) {
	return g.commit(ctx, "confirm", requisition, Committer.Confirm)
}

func (g *Gate) commit(ctx context.Context, what, requisition string, call func(Committer, context.Context, string) (int, error)) (n int, err error) {
	if err := ValidateRequisitionID(requisition); err != nil {
		return 0, fmt.Errorf("budget: %s: %w", what, err)
	}
	c, ok := g.v.(Committer)
	if !ok {
		return 0, fmt.Errorf("budget: %s: the validator keeps no holds: %w", what, ErrUnsupported)
	}
	if g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.timeout)
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			n, err = 0, fmt.Errorf("budget: %s: %w: the validator panicked: %v", what, ErrUnavailable, p)
		}
	}()
	n, err = call(c, ctx, requisition)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrTimeout) {
			err = fmt.Errorf("%w: %w", ErrTimeout, err)
		}
		return 0, fmt.Errorf("budget: %s: %w", what, err)
	}
	return n, nil
}

// ask calls the validator under the gate's timeout. A panic in the
// validator is a failed check, not a crashed checkout.
func (g *Gate) ask(ctx context.Context, req Request) (results []Result, err error) {
	if g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.timeout)
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			results, err = nil, fmt.Errorf("%w: the validator panicked: %v", ErrUnavailable, p)
		}
	}()
	results, err = g.v.Validate(ctx, req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrTimeout) {
			err = fmt.Errorf("%w: %w", ErrTimeout, err)
		}
		return nil, err
	}
	return results, nil
}

// errNoRequisition: a soft stop (or an acknowledged retry) needs the
// requisition id the acknowledgement is bound to.
var errNoRequisition = procure.Invalid(procure.SourceBody, "requisitionId", "is required to acknowledge warnings: the acknowledgement is bound to the requisition")

// The acknowledgement: version byte, expiry (Unix seconds, big-endian) and
// the HMAC-SHA256 tag, base64url without padding.
const (
	ackVersion = 3 // 2: binds the community; 3: the currency and splits
	ackLen     = 1 + 8 + sha256.Size
	ackDomain  = "procurekit/budget checkout acknowledgement v3\x00"
)

func (g *Gate) sign(req Request, results []Result, expires time.Time) string {
	var raw [ackLen]byte
	raw[0] = ackVersion
	binary.BigEndian.PutUint64(raw[1:9], uint64(expires.Unix()))
	tag := ackTag(g.key, raw[:9], g.community, req, results)
	copy(raw[9:], tag)
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

func (g *Gate) acknowledged(ack string, req Request, results []Result, now time.Time) bool {
	if base64.RawURLEncoding.DecodedLen(len(ack)) != ackLen {
		return false
	}
	var raw [ackLen]byte
	if n, err := base64.RawURLEncoding.Decode(raw[:], []byte(ack)); err != nil || n != ackLen {
		return false
	}
	if raw[0] != ackVersion {
		return false
	}
	expires := int64(binary.BigEndian.Uint64(raw[1:9]))
	if now.Unix() >= expires {
		return false
	}
	for _, k := range g.verify {
		if hmac.Equal(raw[9:], ackTag(k, raw[:9], g.community, req, results)) {
			return true
		}
	}
	return false
}

// ackTag is the HMAC over the header (version and expiry), the request and
// the warnings among results. The encoding is canonical and unambiguous:
// every string is length-prefixed, lines and warnings are sorted by line
// number, and amounts are normalised (trailing zeros dropped), so that
// equal requisitions give equal tags and different ones cannot collide.
func ackTag(key, header []byte, community string, req Request, results []Result) []byte {
	m := hmac.New(sha256.New, key)
	w := canonWriter{h: m}
	w.raw([]byte(ackDomain))
	w.raw(header)
	w.str(community)
	w.str(req.RequisitionID)
	w.str(req.Username)
	w.str(req.OrganisationUnit)
	w.str(req.FinanceYear)
	w.str(req.Currency)

	lines := req.Lines
	if !increasing(lines) {
		lines = slices.Clone(lines)
		slices.SortFunc(lines, func(a, b Line) int { return cmp.Compare(a.Number, b.Number) })
	}
	w.uint(uint64(len(lines)))
	for _, l := range lines {
		w.int(int64(l.Number))
		w.str(l.Account)
		w.amount(l.Amount)
		// Splits in their order: the order decides who gets a leftover
		// unit. A split's kind comes before its figure, so that 50
		// percent and an amount of 50 differ.
		w.uint(uint64(len(l.Splits)))
		for _, sp := range l.Splits {
			w.str(sp.Account)
			switch {
			case sp.Percentage.Valid:
				w.uint(1)
				w.amount(sp.Percentage.Decimal)
			case sp.Amount.Valid:
				w.uint(2)
				w.amount(sp.Amount.Decimal)
			default:
				w.uint(0)
			}
		}
	}

	var warnings []Result
	for _, r := range results {
		if r.Status == Warning {
			warnings = append(warnings, r)
		}
	}
	slices.SortFunc(warnings, func(a, b Result) int { return cmp.Compare(a.LineNumber, b.LineNumber) })
	w.uint(uint64(len(warnings)))
	for _, r := range warnings {
		w.int(int64(r.LineNumber))
		w.str(r.Message)
	}
	return m.Sum(nil)
}

// canonWriter writes length-prefixed fields into a hash.
type canonWriter struct {
	h       hash.Hash
	buf     [binary.MaxVarintLen64]byte
	scratch []byte // strings are copied here: hmac has no WriteString
}

func (w *canonWriter) raw(b []byte) { w.h.Write(b) }

func (w *canonWriter) uint(v uint64) {
	w.h.Write(w.buf[:binary.PutUvarint(w.buf[:], v)])
}

func (w *canonWriter) int(v int64) {
	w.h.Write(w.buf[:binary.PutVarint(w.buf[:], v)])
}

// amount writes d normalised (trailing zeros dropped, so 10.5 and 10.50
// write the same): the coefficient, then the exponent. A coefficient that
// fits an int64 is written as a varint after a 0 tag byte, any other as its
// sign and magnitude bytes after a 1 tag byte; the normalised coefficient
// is unique, so each value has exactly one encoding.
func (w *canonWriter) amount(d decimal.Decimal) {
	if d.NumDigits() <= 18 {
		c, e := d.CoefficientInt64(), d.Exponent()
		if c == 0 {
			e = 0
		}
		for c != 0 && c%10 == 0 {
			c /= 10
			e++
		}
		w.buf[0] = 0
		w.h.Write(w.buf[:1])
		w.int(c)
		w.int(int64(e))
		return
	}
	n := d.Normalize()
	if n.NumDigits() <= 18 {
		w.amount(n)
		return
	}
	coef := n.Coefficient()
	w.buf[0], w.buf[1] = 1, byte(coef.Sign()+1)
	w.h.Write(w.buf[:2])
	mag := coef.Bytes()
	w.uint(uint64(len(mag)))
	w.h.Write(mag)
	w.int(int64(n.Exponent()))
}

func (w *canonWriter) str(s string) {
	w.uint(uint64(len(s)))
	w.scratch = append(w.scratch[:0], s...)
	w.h.Write(w.scratch)
}
