package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
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
	// 100 lines, each split three ways by percentage (a leftover cent on
	// every line), in the connector's default currency.
	req := budget.Request{RequisitionID: "REQ-1002"}
	for i := range 100 {
		l := acLine(b, i+1, "", strconv.Itoa(100+i)+".01")
		l.Account = ""
		for k, p := range []string{"33.3333", "33.3333", "33.3334"} {
			l.Splits = append(l.Splits, budget.Split{Account: "6100-" + strconv.Itoa((i*7+k)%10_000), Percentage: acPct(b, p)})
		}
		req.Lines = append(req.Lines, l)
	}
	b.Run("100-lines-split", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			res, err := client.Validate(ctx, req)
			if err != nil || len(res) != 100 {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAccountCodeHandlerSplits is the connector's own CPU for a
// 100-line check with every line split three ways: reading the XML,
// Validate, the table check (allocating every split) and writing the
// reply, with no network in between.
func BenchmarkAccountCodeHandlerSplits(b *testing.B) {
	rows := make(map[string]decimal.Decimal, 10_000)
	for i := range 10_000 {
		rows["6100-"+strconv.Itoa(i)] = decimal.New(int64(100_000+i), -2)
	}
	table, err := budget.NewTable(rows)
	if err != nil {
		b.Fatal(err)
	}
	v, err := budget.NewTableValidator(context.Background(), budget.TableConfig{Load: budget.StaticTable(table)})
	if err != nil {
		b.Fatal(err)
	}
	h := httpapi.NewAccountCodeHandler(v, httpapi.AccountCodeHandlerOptions{InsecureNoAuth: true})
	var body strings.Builder
	body.WriteString("<AccountCodeValidationRequest><RequisitionId>REQ-1002</RequisitionId><Lines>")
	for i := range 100 {
		body.WriteString("<Line><LineNumber>" + strconv.Itoa(i+1) + "</LineNumber><Amount>" + strconv.Itoa(100+i) + ".01</Amount><Splits>")
		for k, p := range []string{"33.3333", "33.3333", "33.3334"} {
			body.WriteString("<Split><Account>6100-" + strconv.Itoa((i*7+k)%10_000) + "</Account><Percentage>" + p + "</Percentage></Split>")
		}
		body.WriteString("</Splits></Line>")
	}
	body.WriteString("</Lines></AccountCodeValidationRequest>")
	doc := body.String()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, httpapi.AccountCodePath, strings.NewReader(doc))
		r.Header.Set("Content-Type", "application/xml")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}
