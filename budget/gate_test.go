package budget_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

// scripted is a validator that answers from a function of the request and
// counts its calls.
type scripted struct {
	calls  atomic.Int32
	answer func(ctx context.Context, req budget.Request) ([]budget.Result, error)
}

func (s *scripted) Validate(ctx context.Context, req budget.Request) ([]budget.Result, error) {
	s.calls.Add(1)
	return s.answer(ctx, req)
}

// verdicts answers every line with the status and message given for its
// account, and Valid for accounts not listed.
func verdicts(byAccount map[string]budget.Result) *scripted {
	return &scripted{answer: func(_ context.Context, req budget.Request) ([]budget.Result, error) {
		out := make([]budget.Result, len(req.Lines))
		for i, l := range req.Lines {
			r, ok := byAccount[l.Account]
			if !ok {
				r = budget.Result{Status: budget.Valid}
			}
			r.LineNumber = l.Number
			out[i] = r
		}
		return out, nil
	}}
}

var testKey = []byte("0123456789abcdef0123456789abcdef")

func newGate(tb testing.TB, v budget.Validator, cfg budget.GateConfig) *budget.Gate {
	tb.Helper()
	if cfg.Key == nil {
		cfg.Key = testKey
	}
	if cfg.Community == "" {
		cfg.Community = "c-test"
	}
	g, err := budget.NewGate(v, cfg)
	if err != nil {
		tb.Fatalf("NewGate: %v", err)
	}
	return g
}

func checkout(tb testing.TB, g *budget.Gate, req budget.Request, ack string) budget.Decision {
	tb.Helper()
	d, err := g.Checkout(context.Background(), req, ack)
	if err != nil {
		tb.Fatalf("Checkout: %v", err)
	}
	return d
}

func requisition(tb testing.TB) budget.Request {
	tb.Helper()
	return budget.Request{
		RequisitionID: "REQ-1001", Username: "jdoe", OrganisationUnit: "OU-SCI", FinanceYear: "2026",
		Lines: []budget.Line{line(tb, 1, "6100-200", "125.50"), line(tb, 2, "6100-300", "10.5"), line(tb, 3, "7200-100", "99")},
	}
}

func TestGateOutcomes(t *testing.T) {
	// docs: account-codes.md "Checkout gate": all Valid proceeds; any Invalid is a hard
	// stop; otherwise any Warning is a soft stop.
	warn := budget.Result{Status: budget.Warning, Message: "Account 6100-300 is nearly spent."}
	bad := budget.Result{Status: budget.Invalid, Message: "Account 7200-100 is closed."}
	cases := []struct {
		name    string
		answers map[string]budget.Result
		want    budget.Outcome
		message string
	}{
		{"all valid", nil, budget.Proceed, ""},
		{"a warning", map[string]budget.Result{"6100-300": warn}, budget.SoftStop, budget.SoftStopMessage},
		{"an invalid line", map[string]budget.Result{"7200-100": bad}, budget.HardStop, budget.HardStopMessage},
		{"invalid wins over warning", map[string]budget.Result{"6100-300": warn, "7200-100": bad}, budget.HardStop, budget.HardStopMessage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGate(t, verdicts(c.answers), budget.GateConfig{})
			d := checkout(t, g, requisition(t), "")
			if d.Outcome != c.want || d.Message != c.message {
				t.Fatalf("decision %v %q; want %v %q", d.Outcome, d.Message, c.want, c.message)
			}
			if d.CanProceed() != (c.want == budget.Proceed) {
				t.Errorf("CanProceed = %v for %v", d.CanProceed(), d.Outcome)
			}
			if (d.Acknowledgement != "") != (c.want == budget.SoftStop) {
				t.Errorf("acknowledgement %q on %v; want one only on a soft stop", d.Acknowledgement, d.Outcome)
			}
			// The per-line verdicts come back in request order.
			var want []budget.Result
			for _, l := range requisition(t).Lines {
				r, ok := c.answers[l.Account]
				if !ok {
					r = budget.Result{Status: budget.Valid}
				}
				r.LineNumber = l.Number
				want = append(want, r)
			}
			if diff := cmp.Diff(want, d.Lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGateAcknowledgement(t *testing.T) {
	warn := map[string]budget.Result{"6100-300": {Status: budget.Warning, Message: "Account 6100-300 is nearly spent."}}
	v := verdicts(warn)
	g := newGate(t, v, budget.GateConfig{})
	first := checkout(t, g, requisition(t), "")
	if first.Outcome != budget.SoftStop || first.Acknowledgement == "" {
		t.Fatalf("first attempt: %v with ack %q; want a soft stop with an acknowledgement", first.Outcome, first.Acknowledgement)
	}
	ack := first.Acknowledgement

	t.Run("the same lines proceed", func(t *testing.T) {
		before := v.calls.Load()
		d := checkout(t, g, requisition(t), ack)
		if d.Outcome != budget.Proceed || !d.Acknowledged {
			t.Fatalf("retry: %v (acknowledged %v); want proceed, acknowledged", d.Outcome, d.Acknowledged)
		}
		// docs: account-codes.md: the retry is re-validated.
		if got := v.calls.Load() - before; got != 1 {
			t.Errorf("the validator was called %d times on the retry; want 1", got)
		}
		// The warning is still reported, for the record.
		if d.Lines[1].Status != budget.Warning {
			t.Errorf("line 2 is %v; want the acknowledged Warning", d.Lines[1].Status)
		}
	})

	same := []struct {
		name   string
		change func(*budget.Request)
	}{
		// Amounts are compared as decimals: 10.5 == 10.50.
		{"an amount written with another scale", func(r *budget.Request) { r.Lines[1] = line(t, 2, "6100-300", "10.50") }},
		{"an amount with many trailing zeros", func(r *budget.Request) { r.Lines[1] = line(t, 2, "6100-300", "10.500000000000000000000000000") }},
		{"the lines in another order", func(r *budget.Request) { r.Lines[0], r.Lines[2] = r.Lines[2], r.Lines[0] }},
		{"the acknowledgement reused on the same lines", func(*budget.Request) {}},
	}
	for _, c := range same {
		t.Run(c.name+" proceeds", func(t *testing.T) {
			req := requisition(t)
			c.change(&req)
			if d := checkout(t, g, req, ack); d.Outcome != budget.Proceed {
				t.Fatalf("decision %v; want proceed", d.Outcome)
			}
		})
	}

	// docs: account-codes.md: the acknowledgement covers only the same lines and
	// amounts (and, here, the same context).
	changed := []struct {
		name   string
		change func(*budget.Request)
	}{
		{"a changed amount", func(r *budget.Request) { r.Lines[0] = line(t, 1, "6100-200", "125.51") }},
		{"a changed amount of the same scale", func(r *budget.Request) { r.Lines[0] = line(t, 1, "6100-200", "125.60") }},
		{"a changed amount beyond 18 digits", func(r *budget.Request) {
			r.Lines[0] = line(t, 1, "6100-200", "125.500000000000000000000000001")
		}},
		{"a changed sign", func(r *budget.Request) { r.Lines[2] = line(t, 3, "7200-100", "-99") }},
		{"a changed amount on the warned line", func(r *budget.Request) { r.Lines[1] = line(t, 2, "6100-300", "10") }},
		{"a changed account", func(r *budget.Request) { r.Lines[0] = line(t, 1, "6100-201", "125.50") }},
		{"a renumbered line", func(r *budget.Request) { r.Lines[2].Number = 4 }},
		{"an added line", func(r *budget.Request) { r.Lines = append(r.Lines, line(t, 4, "6100-200", "1")) }},
		{"a removed line", func(r *budget.Request) { r.Lines = r.Lines[:2] }},
		{"another requisition", func(r *budget.Request) { r.RequisitionID = "REQ-1002" }},
		{"another user", func(r *budget.Request) { r.Username = "mallory" }},
		{"another organisation unit", func(r *budget.Request) { r.OrganisationUnit = "OU-ART" }},
		{"another finance year", func(r *budget.Request) { r.FinanceYear = "2027" }},
		{"fields shifted between context values", func(r *budget.Request) { r.Username, r.OrganisationUnit = "jdoeOU-SCI", "" }},
	}
	for _, c := range changed {
		t.Run(c.name+" needs a fresh acknowledgement", func(t *testing.T) {
			req := requisition(t)
			c.change(&req)
			d := checkout(t, g, req, ack)
			if d.Outcome != budget.SoftStop {
				t.Fatalf("decision %v; want a soft stop", d.Outcome)
			}
			if d.Acknowledgement == "" || d.Acknowledgement == ack {
				t.Fatalf("acknowledgement %q; want a fresh one", d.Acknowledgement)
			}
			if d2 := checkout(t, g, req, d.Acknowledgement); d2.Outcome != budget.Proceed {
				t.Errorf("with the fresh acknowledgement: %v; want proceed", d2.Outcome)
			}
		})
	}

	t.Run("an Invalid line stops even with an acknowledgement", func(t *testing.T) {
		g := newGate(t, verdicts(map[string]budget.Result{
			"6100-300": {Status: budget.Warning, Message: "Account 6100-300 is nearly spent."},
			"7200-100": {Status: budget.Invalid, Message: "closed"},
		}), budget.GateConfig{Key: testKey})
		if d := checkout(t, g, requisition(t), ack); d.Outcome != budget.HardStop {
			t.Fatalf("decision %v; want a hard stop", d.Outcome)
		}
	})

	t.Run("all lines valid on retry proceed without needing it", func(t *testing.T) {
		g := newGate(t, verdicts(nil), budget.GateConfig{Key: testKey})
		d := checkout(t, g, requisition(t), ack)
		if d.Outcome != budget.Proceed || d.Acknowledged {
			t.Fatalf("decision %v (acknowledged %v); want proceed, not acknowledged", d.Outcome, d.Acknowledged)
		}
	})
}

func TestGateHugeAmounts(t *testing.T) {
	// Amounts beyond an int64 coefficient are bound exactly too.
	g := newGate(t, verdicts(map[string]budget.Result{"A": {Status: budget.Warning, Message: "w"}}), budget.GateConfig{})
	req := func(amt string) budget.Request {
		return budget.Request{RequisitionID: "REQ-1", Lines: []budget.Line{line(t, 1, "A", amt)}}
	}
	ack := checkout(t, g, req("-12345678901234567890123.5"), "").Acknowledgement
	for amt, want := range map[string]budget.Outcome{
		"-12345678901234567890123.5":    budget.Proceed,
		"-12345678901234567890123.5000": budget.Proceed,
		"-12345678901234567890123.6":    budget.SoftStop,
		"12345678901234567890123.5":     budget.SoftStop,
		"-1234567890123456789012.35":    budget.SoftStop,
	} {
		if d := checkout(t, g, req(amt), ack); d.Outcome != want {
			t.Errorf("%s: %v; want %v", amt, d.Outcome, want)
		}
	}
}

func TestGateWarningsMustRecur(t *testing.T) {
	// A Warning that was acknowledged proceeds only if the same warnings
	// recur; otherwise the buyer has not seen what now applies.
	req := requisition(t)
	shown := map[string]budget.Result{"6100-300": {Status: budget.Warning, Message: "Account 6100-300 is nearly spent."}}
	g := newGate(t, verdicts(shown), budget.GateConfig{})
	ack := checkout(t, g, req, "").Acknowledgement

	cases := []struct {
		name string
		now  map[string]budget.Result
	}{
		{"a new warning appears", map[string]budget.Result{
			"6100-300": shown["6100-300"],
			"6100-200": {Status: budget.Warning, Message: "Account 6100-200 is nearly spent."},
		}},
		{"the message changed", map[string]budget.Result{"6100-300": {Status: budget.Warning, Message: "Account 6100-300 is now over budget."}}},
		{"the warning moved to another line", map[string]budget.Result{"7200-100": {Status: budget.Warning, Message: "Account 6100-300 is nearly spent."}}},
		{"fewer warnings than were shown", nil}, // covered below with two shown
	}
	for _, c := range cases[:3] {
		t.Run(c.name, func(t *testing.T) {
			g2 := newGate(t, verdicts(c.now), budget.GateConfig{}) // same key
			d := checkout(t, g2, req, ack)
			if d.Outcome != budget.SoftStop {
				t.Fatalf("decision %v; want a soft stop with the new warnings", d.Outcome)
			}
			if d2 := checkout(t, g2, req, d.Acknowledgement); d2.Outcome != budget.Proceed {
				t.Errorf("after acknowledging the new warnings: %v; want proceed", d2.Outcome)
			}
		})
	}
	t.Run(cases[3].name, func(t *testing.T) {
		two := map[string]budget.Result{
			"6100-300": shown["6100-300"],
			"6100-200": {Status: budget.Warning, Message: "Account 6100-200 is nearly spent."},
		}
		ack2 := checkout(t, newGate(t, verdicts(two), budget.GateConfig{}), req, "").Acknowledgement
		d := checkout(t, g, req, ack2) // only 6100-300 warns now
		if d.Outcome != budget.SoftStop {
			t.Fatalf("decision %v; want a soft stop", d.Outcome)
		}
	})
}

func TestGateRejectsBadAcknowledgements(t *testing.T) {
	warn := verdicts(map[string]budget.Result{"6100-300": {Status: budget.Warning, Message: "nearly spent"}})
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	g := newGate(t, warn, budget.GateConfig{Now: clock, AckLifetime: 10 * time.Minute})
	req := requisition(t)
	ack := checkout(t, g, req, "").Acknowledgement

	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	otherKey := []byte("ffffffffffffffffffffffffffffffff")
	foreign := checkout(t, newGate(t, warn, budget.GateConfig{Key: otherKey, Now: clock}), req, "").Acknowledgement

	cases := []struct {
		name string
		ack  string
		at   time.Time
	}{
		{"garbage", "not-an-acknowledgement", now},
		{"empty", "", now},
		{"a flipped tag byte", flip(ack, len(ack)-3), now},
		{"a flipped expiry byte", flip(ack, 4), now},
		{"truncated", ack[:len(ack)-2], now},
		{"with padding added", ack + "==", now},
		{"signed with another key", foreign, now},
		{"expired", ack, now.Add(10 * time.Minute)},
		{"long expired", ack, now.Add(24 * time.Hour)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGate(t, warn, budget.GateConfig{Now: func() time.Time { return c.at }, AckLifetime: 10 * time.Minute})
			if d := checkout(t, g, req, c.ack); d.Outcome != budget.SoftStop {
				t.Fatalf("decision %v; want a soft stop", d.Outcome)
			}
		})
	}

	t.Run("just before expiry it is good", func(t *testing.T) {
		g := newGate(t, warn, budget.GateConfig{Now: func() time.Time { return now.Add(10*time.Minute - time.Second) }})
		if d := checkout(t, g, req, ack); d.Outcome != budget.Proceed {
			t.Fatalf("decision %v; want proceed", d.Outcome)
		}
	})

	t.Run("a previous key still verifies", func(t *testing.T) {
		rotated := newGate(t, warn, budget.GateConfig{Key: otherKey, PreviousKeys: [][]byte{testKey}, Now: clock})
		if d := checkout(t, rotated, req, ack); d.Outcome != budget.Proceed {
			t.Fatalf("decision %v; want proceed", d.Outcome)
		}
		// ... but signs with the new key only.
		fresh := checkout(t, rotated, req, "").Acknowledgement
		if d := checkout(t, g, req, fresh); d.Outcome != budget.SoftStop {
			t.Errorf("an acknowledgement of the new key passed a gate without it: %v", d.Outcome)
		}
	})
}

func TestGateUnavailable(t *testing.T) {
	// docs: account-codes.md: a finance system that times out, errors, or replies
	// malformed never lets a checkout proceed.
	req := requisition(t)
	answerAll := func(status budget.Status) []budget.Result {
		out := make([]budget.Result, len(req.Lines))
		for i, l := range req.Lines {
			out[i] = budget.Result{LineNumber: l.Number, Status: status}
		}
		return out
	}
	cases := []struct {
		name      string
		answer    func(context.Context, budget.Request) ([]budget.Result, error)
		wantCause error
	}{
		{"an error", func(context.Context, budget.Request) ([]budget.Result, error) {
			return nil, budget.ErrUnavailable
		}, budget.ErrUnavailable},
		{"an error with results", func(context.Context, budget.Request) ([]budget.Result, error) {
			return answerAll(budget.Valid), errors.New("boom")
		}, nil},
		{"a timeout", func(ctx context.Context, _ budget.Request) ([]budget.Result, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, budget.ErrTimeout},
		{"a missing line", func(context.Context, budget.Request) ([]budget.Result, error) {
			return answerAll(budget.Valid)[:2], nil
		}, budget.ErrMalformedReply},
		{"an extra line", func(context.Context, budget.Request) ([]budget.Result, error) {
			return append(answerAll(budget.Valid), budget.Result{LineNumber: 9, Status: budget.Valid}), nil
		}, budget.ErrMalformedReply},
		{"a duplicate line", func(context.Context, budget.Request) ([]budget.Result, error) {
			r := answerAll(budget.Valid)
			r[2].LineNumber = 1
			return r, nil
		}, budget.ErrMalformedReply},
		{"an unknown status", func(context.Context, budget.Request) ([]budget.Result, error) {
			return answerAll("Approved"), nil
		}, budget.ErrMalformedReply},
		{"no results and no error", func(context.Context, budget.Request) ([]budget.Result, error) {
			return nil, nil
		}, budget.ErrMalformedReply},
		{"a panic", func(context.Context, budget.Request) ([]budget.Result, error) {
			panic("validator bug")
		}, budget.ErrUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGate(t, &scripted{answer: c.answer}, budget.GateConfig{Timeout: 20 * time.Millisecond})
			for _, ack := range []string{"", "some-acknowledgement"} {
				d := checkout(t, g, req, ack)
				if d.Outcome != budget.Unavailable || d.CanProceed() {
					t.Fatalf("decision %v; want unavailable", d.Outcome)
				}
				if d.Message != budget.UnavailableMessage || d.Lines != nil || d.Acknowledgement != "" {
					t.Errorf("decision %+v; want only the unavailable message", d)
				}
				if d.Cause == nil || (c.wantCause != nil && !errors.Is(d.Cause, c.wantCause)) {
					t.Errorf("cause %v; want one matching %v", d.Cause, c.wantCause)
				}
			}
		})
	}

	t.Run("a cancelled checkout", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		g := newGate(t, &scripted{answer: func(ctx context.Context, _ budget.Request) ([]budget.Result, error) {
			return nil, ctx.Err()
		}}, budget.GateConfig{})
		d, err := g.Checkout(ctx, req, "")
		if err != nil || d.Outcome != budget.Unavailable || !errors.Is(d.Cause, context.Canceled) {
			t.Fatalf("Checkout = %v (cause %v), %v; want unavailable caused by the cancellation", d.Outcome, d.Cause, err)
		}
	})
}

func TestGateBadInput(t *testing.T) {
	v := verdicts(nil)
	g := newGate(t, v, budget.GateConfig{})
	for name, req := range map[string]budget.Request{
		"no lines":          {},
		"duplicate numbers": {Lines: []budget.Line{line(t, 1, "A", "1"), line(t, 1, "B", "1")}},
		"blank account":     {Lines: []budget.Line{line(t, 1, "", "1")}},
	} {
		t.Run(name, func(t *testing.T) {
			d, err := g.Checkout(context.Background(), req, "")
			if !errors.Is(err, procure.ErrInvalid) {
				t.Fatalf("error %v; want one matching procure.ErrInvalid", err)
			}
			if d.CanProceed() {
				t.Errorf("the zero decision must not proceed")
			}
		})
	}
	if n := v.calls.Load(); n != 0 {
		t.Errorf("the validator was called %d times for unusable requests", n)
	}
}

func TestGateValidatorCannotTamperWithLines(t *testing.T) {
	// A validator that rewrites the lines it is given must not change
	// what the acknowledgement is bound to.
	v := &scripted{answer: func(_ context.Context, req budget.Request) ([]budget.Result, error) {
		out := make([]budget.Result, len(req.Lines))
		for i := range req.Lines {
			out[i] = budget.Result{LineNumber: req.Lines[i].Number, Status: budget.Warning, Message: "w"}
			req.Lines[i].Amount = req.Lines[i].Amount.Add(amount(t, "1000"))
		}
		return out, nil
	}}
	g := newGate(t, v, budget.GateConfig{})
	req := requisition(t)
	ack := checkout(t, g, req, "").Acknowledgement
	if got := budget.FormatAmount(req.Lines[0].Amount); got != "125.50" {
		t.Fatalf("the caller's line changed to %s", got)
	}
	if d := checkout(t, g, req, ack); d.Outcome != budget.Proceed {
		t.Fatalf("decision %v; want proceed", d.Outcome)
	}
}

func TestNewGate(t *testing.T) {
	v := verdicts(nil)
	if _, err := budget.NewGate(nil, budget.GateConfig{}); err == nil {
		t.Error("NewGate(nil) succeeded")
	}
	if _, err := budget.NewGate(v, budget.GateConfig{Community: "c", Key: []byte("short")}); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("a short key: %v; want an error asking for 32 bytes", err)
	}
	if _, err := budget.NewGate(v, budget.GateConfig{Community: "c", Key: testKey, PreviousKeys: [][]byte{[]byte("short")}}); err == nil {
		t.Error("a short previous key was accepted")
	}
	// Without a key, each gate makes its own: acknowledgements do not
	// cross gates.
	warn := verdicts(map[string]budget.Result{"A": {Status: budget.Warning}})
	g1, err := budget.NewGate(warn, budget.GateConfig{Community: "c"})
	if err != nil {
		t.Fatal(err)
	}
	g2, err := budget.NewGate(warn, budget.GateConfig{Community: "c"})
	if err != nil {
		t.Fatal(err)
	}
	req := budget.Request{RequisitionID: "REQ-1", Lines: []budget.Line{line(t, 1, "A", "1")}}
	ack := checkout(t, g1, req, "").Acknowledgement
	if d := checkout(t, g1, req, ack); d.Outcome != budget.Proceed {
		t.Errorf("same gate: %v; want proceed", d.Outcome)
	}
	if d := checkout(t, g2, req, ack); d.Outcome != budget.SoftStop {
		t.Errorf("another gate with its own key: %v; want a soft stop", d.Outcome)
	}
}

func TestOutcomeString(t *testing.T) {
	want := map[budget.Outcome]string{
		budget.Proceed: "proceed", budget.HardStop: "hard_stop", budget.SoftStop: "soft_stop",
		budget.Unavailable: "unavailable", budget.Outcome(0): "undecided",
	}
	for o, s := range want {
		if o.String() != s {
			t.Errorf("%d.String() = %q; want %q", o, o.String(), s)
		}
	}
	var zero budget.Decision
	if zero.CanProceed() {
		t.Error("the zero Decision can proceed")
	}
}
