package budget_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/procurekit/procure/budget"
)

// A checkout against a budget table, with the over-budget policy Warning:
// the first attempt is a soft stop; checking out again with the
// acknowledgement proceeds.
func ExampleGate() {
	table, err := budget.ReadCSV(strings.NewReader("account,budget\n6100-200,1000\n6100-300,250\n"), "budgets.csv")
	if err != nil {
		log.Fatal(err)
	}
	v, err := budget.NewTableValidator(context.Background(), budget.TableConfig{
		Load:       budget.StaticTable(table),
		OverBudget: budget.Warning,
	})
	if err != nil {
		log.Fatal(err)
	}
	gate, err := budget.NewGate(v, budget.GateConfig{Community: "acme", Key: []byte("an example key of at least 32 bytes")})
	if err != nil {
		log.Fatal(err)
	}

	a1, err := budget.ParseAmount("125.50")
	if err != nil {
		log.Fatal(err)
	}
	a2, err := budget.ParseAmount("300")
	if err != nil {
		log.Fatal(err)
	}
	req := budget.Request{RequisitionID: "REQ-1001", Username: "jdoe", Lines: []budget.Line{
		{Number: 1, Account: "6100-200", Amount: a1},
		{Number: 2, Account: "6100-300", Amount: a2},
	}}

	d, err := gate.Checkout(context.Background(), req, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Outcome, d.CanProceed())
	for _, l := range d.Lines {
		fmt.Println(strings.TrimSpace(fmt.Sprintf("line %d: %s %s", l.LineNumber, l.Status, l.Message)))
	}

	// The buyer clicks checkout again; the gate re-validates.
	d, err = gate.Checkout(context.Background(), req, d.Acknowledgement)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Outcome, d.CanProceed(), d.Acknowledged)
	// Output:
	// soft_stop false
	// line 1: Valid
	// line 2: Warning The lines on account 6100-300 exceed its available budget.
	// proceed true true
}

// Lines are summed per account; an absent account is Invalid.
func ExampleTable_Check() {
	table, err := budget.ReadCSV(strings.NewReader("account,budget\n6100-200,100\n"), "budgets.csv")
	if err != nil {
		log.Fatal(err)
	}
	lines := []budget.Line{}
	for i, s := range []struct{ account, amount string }{{"6100-200", "60"}, {"6100-200", "40.00"}, {"9999-000", "1"}} {
		a, err := budget.ParseAmount(s.amount)
		if err != nil {
			log.Fatal(err)
		}
		lines = append(lines, budget.Line{Number: i + 1, Account: s.account, Amount: a})
	}
	for _, r := range table.Check(budget.Request{Lines: lines}, budget.Invalid) {
		fmt.Println(strings.TrimSpace(fmt.Sprint(r.LineNumber, " ", r.Status, " ", r.Message)))
	}
	// Output:
	// 1 Valid
	// 2 Valid
	// 3 Invalid Account 9999-000 has no budget.
}

// A reply must answer every request line exactly once.
func ExampleCheckReply() {
	one, _ := budget.ParseAmount("10")
	req := budget.Request{Lines: []budget.Line{{Number: 1, Account: "A", Amount: one}, {Number: 2, Account: "B", Amount: one}}}
	err := budget.CheckReply(req, []budget.Result{{LineNumber: 1, Status: budget.Valid}})
	fmt.Println(err)
	// Output:
	// malformed reply: no result for line 2
}
