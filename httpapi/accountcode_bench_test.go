package httpapi_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/accountcodeapi"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/httpapi"
)

// BenchmarkAccountCodeRoundTrip measures one whole exchange over loopback:
// the client writes the XML request, the connector reads it, checks it
// against a budget table of 10,000 accounts, writes the XML reply, and the
// client reads and checks it.
func BenchmarkAccountCodeRoundTrip(b *testing.B) {
	rows := make(map[string]decimal.Decimal, 10_000)
	for i := range 10_000 {
		rows["6100-"+strconv.Itoa(i)] = decimal.New(int64(100_000+i), -2)
	}
	table, err := budget.NewTable(rows)
	if err != nil {
		b.Fatal(err)
	}
	v, err := budget.NewTableValidator(context.Background(), budget.TableConfig{Load: budget.StaticTable(table), OverBudget: budget.Warning})
	if err != nil {
		b.Fatal(err)
	}
	srv := newConnector(b, v, httpapi.AccountCodeHandlerOptions{})
	client, err := accountcodeapi.New(srv.URL+httpapi.AccountCodePath, accountcodeapi.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 1000} {
		req := budget.Request{RequisitionID: "REQ-1001", Username: "jdoe", OrganisationUnit: "OU-SCI", FinanceYear: "2026"}
		for i := range n {
			// Every third line is over its budget (a Warning with a message).
			amount := "125.50"
			if i%3 == 2 {
				amount = "5000.00"
			}
			req.Lines = append(req.Lines, acLine(b, i+1, "6100-"+strconv.Itoa(i*7%10_000), amount))
		}
		b.Run(strconv.Itoa(n)+"-lines", func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := client.Validate(ctx, req)
				if err != nil || len(res) != n {
					b.Fatal(err)
				}
			}
		})
	}
}
