package accountcodeapi_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/accountcodeapi"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/httpapi"
)

// The platform asks a connector, here one with a budget table served on a
// loopback address, about a requisition's lines, and the checkout gate
// turns the verdicts into what the buyer may do.
func Example() {
	ctx := context.Background()

	// The customer's side: a connector answering from a budget table.
	table, err := budget.NewTable(map[string]decimal.Decimal{"6100-200": decimal.New(20000, -2)})
	if err != nil {
		log.Fatal(err)
	}
	tv, err := budget.NewTableValidator(ctx, budget.TableConfig{Load: budget.StaticTable(table)})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	httpapi.NewAccountCodeHandler(tv, httpapi.AccountCodeHandlerOptions{Token: "fixture-connector-token"}).Mount(mux)
	connector := httptest.NewServer(mux)
	defer connector.Close()

	// The platform's side.
	client, err := accountcodeapi.New(connector.URL+httpapi.AccountCodePath, accountcodeapi.Options{Token: "fixture-connector-token"})
	if err != nil {
		log.Fatal(err)
	}
	req := budget.Request{RequisitionID: "REQ-1001", Username: "jdoe", Lines: []budget.Line{
		{Number: 1, Account: "6100-200", Amount: decimal.RequireFromString("125.50")},
		{Number: 2, Account: "9999", Amount: decimal.RequireFromString("1.00")},
	}}
	results, err := client.Validate(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Printf("line %d: %s %q\n", r.LineNumber, r.Status, r.Message)
	}

	gate, err := budget.NewGate(client, budget.GateConfig{Community: "c-1"})
	if err != nil {
		log.Fatal(err)
	}
	d, err := gate.Checkout(ctx, req, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("checkout:", d.Outcome)
	// Output:
	// line 1: Valid ""
	// line 2: Invalid "Account 9999 has no budget."
	// checkout: hard_stop
}
