package budget_test

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
)

// bigTable is a budget table of a million accounts, read from CSV once per
// test binary.
var bigTable = sync.OnceValues(func() (*budget.Table, error) {
	var b bytes.Buffer
	b.WriteString("account,budget\n")
	for i := 0; i < 1_000_000; i++ {
		b.WriteString("ACC-")
		b.WriteString(strconv.Itoa(i))
		b.WriteString(",")
		b.WriteString(strconv.Itoa(1000 + i%5000))
		b.WriteString(".50\n")
	}
	return budget.ReadCSV(&b, "bench.csv")
})

// benchRequest has n lines over n/2 accounts (two lines each, so sums are
// exercised), one in ten absent from the table.
func benchRequest(tb testing.TB, n int) budget.Request {
	tb.Helper()
	req := budget.Request{RequisitionID: "REQ-1001", Username: "jdoe", Lines: make([]budget.Line, n)}
	for i := range req.Lines {
		acc := "ACC-" + strconv.Itoa((i/2)*1999%1_000_000)
		if i%10 == 9 {
			acc = "NOPE-" + strconv.Itoa(i)
		}
		req.Lines[i] = budget.Line{Number: i + 1, Account: acc, Amount: amount(tb, strconv.Itoa(100+i)+".25")}
	}
	return req
}

func BenchmarkTableValidator(b *testing.B) {
	tab, err := bigTable()
	if err != nil {
		b.Fatal(err)
	}
	v, err := budget.NewTableValidator(context.Background(), budget.TableConfig{Load: budget.StaticTable(tab)})
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest(b, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := v.Validate(ctx, req)
		if err != nil || len(res) != 1000 {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadCSVMillion(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("account,budget\n")
	for i := 0; i < 1_000_000; i++ {
		buf.WriteString("ACC-" + strconv.Itoa(i) + "," + strconv.Itoa(1000+i%5000) + ".50\n")
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := budget.ReadCSV(bytes.NewReader(data), "bench.csv"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGateCheckout(b *testing.B) {
	tab, err := bigTable()
	if err != nil {
		b.Fatal(err)
	}
	v, err := budget.NewTableValidator(context.Background(), budget.TableConfig{Load: budget.StaticTable(tab), OverBudget: budget.Warning})
	if err != nil {
		b.Fatal(err)
	}
	g, err := budget.NewGate(v, budget.GateConfig{Community: "c-bench", Key: testKey})
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest(b, 1000)
	for i := range req.Lines { // no absent accounts: warnings only, so acknowledgements are signed
		req.Lines[i].Account = "ACC-" + strconv.Itoa(i)
		req.Lines[i].Amount = amount(b, "999999")
	}
	ctx := context.Background()
	d, err := g.Checkout(ctx, req, "")
	if err != nil || d.Outcome != budget.SoftStop {
		b.Fatalf("%v %v", d.Outcome, err)
	}
	ack := d.Acknowledgement
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		d, err := g.Checkout(ctx, req, ack)
		if err != nil || d.Outcome != budget.Proceed {
			b.Fatal(d.Outcome, err)
		}
	}
}

// splitRequest has n lines, each split three ways by percentage
// (33.3333/33.3333/33.3334, so every line has a leftover cent) over
// accounts that overlap between lines.
func splitRequest(tb testing.TB, n int) budget.Request {
	tb.Helper()
	req := budget.Request{RequisitionID: "REQ-2001", Currency: "NZD", Lines: make([]budget.Line, n)}
	for i := range req.Lines {
		req.Lines[i] = splitLine(tb, i+1, strconv.Itoa(100+i)+".01",
			pct(tb, "ACC-"+strconv.Itoa(i), "33.3333"),
			pct(tb, "ACC-"+strconv.Itoa(i+1), "33.3333"),
			pct(tb, "ACC-"+strconv.Itoa(i+2), "33.3334"))
	}
	return req
}

// BenchmarkTableCheckSplits is the connector's work on a 100-line check
// with splits, without holds: Request.Validate and Table.Check (which
// allocates every split).
func BenchmarkTableCheckSplits(b *testing.B) {
	budgets := map[string]decimal.Decimal{}
	for i := range 1000 {
		budgets["ACC-"+strconv.Itoa(i)] = decimal.New(int64(1000+i), 0)
	}
	tab, err := budget.NewTable(budgets)
	if err != nil {
		b.Fatal(err)
	}
	req := splitRequest(b, 100)
	b.ReportAllocs()
	for b.Loop() {
		if err := req.Validate(); err != nil {
			b.Fatal(err)
		}
		if res := tab.Check(req, budget.Invalid); len(res) != 100 {
			b.Fatal(len(res))
		}
	}
}

// BenchmarkShares allocates one line split three ways.
func BenchmarkShares(b *testing.B) {
	l := splitRequest(b, 1).Lines[0]
	var out []budget.Share
	b.ReportAllocs()
	for b.Loop() {
		out = l.AppendShares(out[:0], "NZD")
	}
}
