package budget_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

// splitRequisition has a split line whose first account warns.
func splitRequisition(tb testing.TB) budget.Request {
	tb.Helper()
	return budget.Request{
		RequisitionID: "REQ-2001", Username: "jdoe", Currency: "NZD",
		Lines: []budget.Line{
			line(tb, 1, "6100-200", "125.50"),
			splitLine(tb, 2, "100.00", pct(tb, "6100-300", "33.3333"), pct(tb, "6100-400", "33.3333"), pct(tb, "6100-500", "33.3334")),
			splitLine(tb, 3, "10", amt(tb, "6100-300", "4"), amt(tb, "6100-400", "6")),
		},
	}
}

// warnSplits warns on every line that charges 6100-300, directly or by a
// split, naming it.
var warnSplits = budget.ValidatorFunc(func(_ context.Context, req budget.Request) ([]budget.Result, error) {
	out := make([]budget.Result, len(req.Lines))
	for i, l := range req.Lines {
		out[i] = budget.Result{LineNumber: l.Number, Status: budget.Valid}
		for _, s := range l.Shares(req.Currency) {
			if s.Account == "6100-300" {
				out[i] = budget.Result{LineNumber: l.Number, Status: budget.Warning, Message: "Account 6100-300 is nearly spent."}
			}
		}
	}
	return out, nil
})

// The acknowledgement binds each line's splits and the request's currency
// (docs: account-codes.md "Checkout gate"): a buyer who saw a warning for
// one allocation has not seen it for another.
func TestGateAcknowledgementBindsSplitsAndCurrency(t *testing.T) {
	g := newGate(t, warnSplits, budget.GateConfig{})
	first := checkout(t, g, splitRequisition(t), "")
	if first.Outcome != budget.SoftStop || first.Acknowledgement == "" {
		t.Fatalf("first attempt: %v; want a soft stop with an acknowledgement", first.Outcome)
	}
	ack := first.Acknowledgement

	same := []struct {
		name   string
		change func(*budget.Request)
	}{
		{"the same splits", func(*budget.Request) {}},
		{"a percentage written with another scale", func(r *budget.Request) {
			r.Lines[1].Splits[2] = pct(t, "6100-500", "33.33340")
		}},
		{"a split amount written with another scale", func(r *budget.Request) {
			r.Lines[2].Splits[0] = amt(t, "6100-300", "4.00")
		}},
	}
	for _, c := range same {
		t.Run(c.name+" proceeds", func(t *testing.T) {
			req := splitRequisition(t)
			c.change(&req)
			if d := checkout(t, g, req, ack); d.Outcome != budget.Proceed || !d.Acknowledged {
				t.Fatalf("decision %v (acknowledged %v); want proceed, acknowledged", d.Outcome, d.Acknowledged)
			}
		})
	}

	changed := []struct {
		name   string
		change func(*budget.Request)
	}{
		{"a changed percentage", func(r *budget.Request) {
			r.Lines[1].Splits[0] = pct(t, "6100-300", "33.3334")
			r.Lines[1].Splits[2] = pct(t, "6100-500", "33.3333")
		}},
		{"a changed split account", func(r *budget.Request) { r.Lines[1].Splits[1].Account = "6100-401" }},
		{"splits in another order", func(r *budget.Request) {
			s := r.Lines[1].Splits
			s[1], s[2] = s[2], s[1]
		}},
		{"a changed split amount", func(r *budget.Request) {
			r.Lines[2].Splits[0] = amt(t, "6100-300", "3")
			r.Lines[2].Splits[1] = amt(t, "6100-400", "7")
		}},
		{"a percentage where an amount was", func(r *budget.Request) {
			r.Lines[2] = splitLine(t, 3, "10", pct(t, "6100-300", "40"), pct(t, "6100-400", "60"))
		}},
		{"a split dropped", func(r *budget.Request) {
			r.Lines[2] = splitLine(t, 3, "10", amt(t, "6100-300", "10"))
		}},
		{"an unsplit line where a split one was", func(r *budget.Request) {
			r.Lines[2] = line(t, 3, "6100-300", "10")
		}},
		{"another currency", func(r *budget.Request) { r.Currency = "AUD" }},
		{"no currency (the connector's default)", func(r *budget.Request) { r.Currency = "" }},
	}
	for _, c := range changed {
		t.Run(c.name+" needs a fresh acknowledgement", func(t *testing.T) {
			req := splitRequisition(t)
			c.change(&req)
			d := checkout(t, g, req, ack)
			if d.Outcome != budget.SoftStop || d.Acknowledgement == "" || d.Acknowledgement == ack {
				t.Fatalf("decision %v with acknowledgement %q; want a soft stop with a fresh one", d.Outcome, d.Acknowledgement)
			}
			if d2 := checkout(t, g, req, d.Acknowledgement); d2.Outcome != budget.Proceed {
				t.Errorf("with the fresh acknowledgement: %v; want proceed", d2.Outcome)
			}
		})
	}
}

// committer is a validator that keeps holds: it records what it is told.
type committer struct {
	budget.Validator
	mu      sync.Mutex
	calls   []string
	changed int
	err     error
	wait    bool // block until the context ends
}

func (c *committer) record(ctx context.Context, what, requisition string) (int, error) {
	c.mu.Lock()
	c.calls = append(c.calls, what+" "+requisition)
	c.mu.Unlock()
	if c.wait {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return c.changed, c.err
}

func (c *committer) Release(ctx context.Context, requisition string) (int, error) {
	return c.record(ctx, "release", requisition)
}

func (c *committer) Confirm(ctx context.Context, requisition string) (int, error) {
	return c.record(ctx, "confirm", requisition)
}

func TestGateReleaseConfirm(t *testing.T) {
	ctx := context.Background()
	c := &committer{Validator: verdicts(nil), changed: 3}
	g := newGate(t, c, budget.GateConfig{})
	if n, err := g.Release(ctx, "REQ-1"); n != 3 || err != nil {
		t.Errorf("Release = %d, %v; want 3, nil", n, err)
	}
	if n, err := g.Confirm(ctx, "REQ-2"); n != 3 || err != nil {
		t.Errorf("Confirm = %d, %v; want 3, nil", n, err)
	}
	if got := strings.Join(c.calls, ", "); got != "release REQ-1, confirm REQ-2" {
		t.Errorf("the validator was told %q", got)
	}

	t.Run("a bad requisition is refused before sending", func(t *testing.T) {
		c.calls = nil
		for _, id := range []string{"", "  ", strings.Repeat("x", budget.MaxRequisitionIDLength+1)} {
			if _, err := g.Release(ctx, id); !errors.Is(err, procure.ErrInvalid) {
				t.Errorf("Release(%.10q...) = %v; want procure.ErrInvalid", id, err)
			}
			if _, err := g.Confirm(ctx, id); !errors.Is(err, procure.ErrInvalid) {
				t.Errorf("Confirm(%.10q...) = %v; want procure.ErrInvalid", id, err)
			}
		}
		if len(c.calls) != 0 {
			t.Errorf("the validator was told %v", c.calls)
		}
	})

	t.Run("a validator without holds", func(t *testing.T) {
		g := newGate(t, verdicts(nil), budget.GateConfig{})
		if _, err := g.Release(ctx, "REQ-1"); !errors.Is(err, budget.ErrUnsupported) {
			t.Errorf("Release = %v; want budget.ErrUnsupported", err)
		}
		if _, err := g.Confirm(ctx, "REQ-1"); !errors.Is(err, budget.ErrUnsupported) {
			t.Errorf("Confirm = %v; want budget.ErrUnsupported", err)
		}
	})

	t.Run("a failure comes back as it is", func(t *testing.T) {
		g := newGate(t, &committer{Validator: verdicts(nil), err: budget.ErrUnavailable}, budget.GateConfig{})
		if n, err := g.Release(ctx, "REQ-1"); n != 0 || !errors.Is(err, budget.ErrUnavailable) {
			t.Errorf("Release = %d, %v; want 0, budget.ErrUnavailable", n, err)
		}
	})

	t.Run("the gate's timeout bounds the call", func(t *testing.T) {
		g := newGate(t, &committer{Validator: verdicts(nil), wait: true}, budget.GateConfig{Timeout: time.Millisecond})
		if _, err := g.Confirm(ctx, "REQ-1"); !errors.Is(err, budget.ErrTimeout) {
			t.Errorf("Confirm = %v; want budget.ErrTimeout", err)
		}
	})
}
