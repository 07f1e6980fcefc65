package budget_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

// Regression tests of issue 11 ("Hard to break") for the gate and the
// request limits.

func TestGateAcknowledgementBoundToCommunity(t *testing.T) {
	// One key per deployment is safe: an acknowledgement signed by the
	// gate of community A is worth nothing at the gate of community B,
	// even with the same key, validator and lines.
	warn := verdicts(map[string]budget.Result{"6100-300": {Status: budget.Warning, Message: "nearly spent"}})
	a := newGate(t, warn, budget.GateConfig{Community: "community-a", Key: testKey})
	b := newGate(t, warn, budget.GateConfig{Community: "community-b", Key: testKey})
	ack := checkout(t, a, requisition(t), "").Acknowledgement
	if ack == "" {
		t.Fatal("no acknowledgement from the soft stop")
	}
	if d := checkout(t, b, requisition(t), ack); d.Outcome != budget.SoftStop || d.Acknowledged {
		t.Fatalf("A's acknowledgement at B: %v (acknowledged %v); want a soft stop", d.Outcome, d.Acknowledged)
	}
	if d := checkout(t, a, requisition(t), ack); d.Outcome != budget.Proceed {
		t.Fatalf("A's acknowledgement at A: %v; want proceed", d.Outcome)
	}
	// A second gate of the same community and key accepts it (a cluster).
	a2 := newGate(t, warn, budget.GateConfig{Community: "community-a", Key: testKey})
	if d := checkout(t, a2, requisition(t), ack); d.Outcome != budget.Proceed {
		t.Fatalf("A's acknowledgement at another gate of A: %v; want proceed", d.Outcome)
	}
}

func TestGateNeedsCommunity(t *testing.T) {
	_, err := budget.NewGate(verdicts(nil), budget.GateConfig{Key: testKey})
	if err == nil || !strings.Contains(err.Error(), "community") {
		t.Fatalf("NewGate without a community: %v; want an error naming the community", err)
	}
}

func TestGateRequisitionIDRequiredToAcknowledge(t *testing.T) {
	// Without a requisition id an acknowledgement would fit every
	// requisition with the same lines: a soft stop, or a retry carrying an
	// acknowledgement, needs the id.
	warn := verdicts(map[string]budget.Result{"6100-300": {Status: budget.Warning, Message: "nearly spent"}})
	g := newGate(t, warn, budget.GateConfig{})
	noID := requisition(t)
	noID.RequisitionID = ""

	d, err := g.Checkout(context.Background(), noID, "")
	var ve *procure.ValidationError
	if !errors.As(err, &ve) || ve.Fields[0].Field != "requisitionId" {
		t.Fatalf("a warning without a requisition id: %v, %v; want a ValidationError naming requisitionId", d.Outcome, err)
	}
	if d.CanProceed() || d.Acknowledgement != "" {
		t.Errorf("decision %+v; want none, with no acknowledgement", d)
	}

	// An acknowledgement of a requisition with an id does not carry over
	// to one without.
	ack := checkout(t, g, requisition(t), "").Acknowledgement
	if d, err := g.Checkout(context.Background(), noID, ack); !errors.Is(err, procure.ErrInvalid) || d.CanProceed() {
		t.Fatalf("an acknowledged retry without a requisition id: %v, %v; want ErrInvalid", d.Outcome, err)
	}

	// With no warning, no id is needed: nothing is acknowledged.
	valid := newGate(t, verdicts(nil), budget.GateConfig{})
	if d := checkout(t, valid, noID, ""); d.Outcome != budget.Proceed {
		t.Errorf("all valid without a requisition id: %v; want proceed", d.Outcome)
	}
	// An Invalid line stays a hard stop.
	bad := newGate(t, verdicts(map[string]budget.Result{"6100-300": {Status: budget.Invalid}}), budget.GateConfig{})
	if d := checkout(t, bad, noID, ""); d.Outcome != budget.HardStop {
		t.Errorf("an invalid line without a requisition id: %v; want a hard stop", d.Outcome)
	}
}

func TestRequestMaxLines(t *testing.T) {
	// docs: limits.md: 10,000 lines per validation request.
	lines := func(n int) budget.Request {
		r := budget.Request{RequisitionID: "REQ-1", Lines: make([]budget.Line, n)}
		for i := range r.Lines {
			r.Lines[i] = budget.Line{Number: i + 1, Account: "A", Amount: amount(t, "1")}
		}
		return r
	}
	at := lines(budget.MaxLines)
	if err := at.Validate(); err != nil {
		t.Fatalf("%d lines: %v; want accepted", budget.MaxLines, err)
	}
	past := lines(budget.MaxLines + 1)
	err := past.Validate()
	var ve *procure.ValidationError
	if !errors.As(err, &ve) || ve.Fields[0].Field != "lines" || !strings.Contains(ve.Fields[0].Rule, "at most 10000") {
		t.Fatalf("%d lines: %v; want a ValidationError on lines saying at most 10000", budget.MaxLines+1, err)
	}
	// The gate refuses it before asking the finance system.
	v := verdicts(nil)
	g := newGate(t, v, budget.GateConfig{})
	if _, err := g.Checkout(context.Background(), past, ""); !errors.Is(err, procure.ErrInvalid) {
		t.Fatalf("gate checkout of %d lines: %v; want ErrInvalid", budget.MaxLines+1, err)
	}
	if d := checkout(t, g, at, ""); d.Outcome != budget.Proceed {
		t.Fatalf("gate checkout of %d lines: %v; want proceed", budget.MaxLines, d.Outcome)
	}
	if n := v.calls.Load(); n != 1 {
		t.Errorf("the validator was called %d times; want 1 (only the request at the limit)", n)
	}
}
