package holdstest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/internal/cputime"
)

// BenchmarkCheck measures a 100-line check, each line split by percentage
// over three accounts, through a budget.TableValidator holding in s, the
// requisition changing every iteration among 1,000, so each check reads
// the others' holds and writes its own: with 300 distinct accounts per
// check (every split on an account of its own), and with 20 (the lines
// share accounts, as real requisitions mostly do). It reports the median time of one check
// (p50-ns) beside the mean, and the CPU time per check of this process
// (cpu-ns/op) and, when serverCPU is not nil, of the store's server
// (server-cpu-ns/op): serverCPU returns the server's CPU time so far.
func BenchmarkCheck(b *testing.B, s budget.HoldStore, serverCPU func() time.Duration) {
	for _, n := range []int{300, 20} {
		b.Run("accounts="+strconv.Itoa(n), func(b *testing.B) { benchmarkCheck(b, s, serverCPU, n) })
	}
}

func benchmarkCheck(b *testing.B, s budget.HoldStore, serverCPU func() time.Duration, accounts int) {
	budgets := map[string]decimal.Decimal{}
	for i := range accounts {
		budgets[fmt.Sprintf("%d-%03d", accounts, i)] = decimal.New(1_000_000_000, 0)
	}
	t, err := budget.NewTable(budgets)
	if err != nil {
		b.Fatal(err)
	}
	v, err := budget.NewTableValidator(context.Background(), budget.TableConfig{Load: budget.StaticTable(t), Holds: s})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	req := budget.Request{Currency: "NZD"}
	for i := range 100 {
		l := budget.Line{Number: i + 1, Amount: decimal.New(int64(10_000+i*37), -2)}
		for j, pct := range []string{"33.3333", "33.3333", "33.3334"} {
			l.Splits = append(l.Splits, budget.Split{
				Account:    fmt.Sprintf("%d-%03d", accounts, (i*3+j)%accounts),
				Percentage: decimal.NewNullDecimal(decimal.RequireFromString(pct)),
			})
		}
		req.Lines = append(req.Lines, l)
	}
	ctx := context.Background()
	var took []time.Duration
	b.ReportAllocs()
	// The process's CPU time over the loop (the garbage collector's
	// included) is the server's cost, which the machine's other load does
	// not inflate as it does the wall-clock times.
	startCPU := cputime.Process()
	var startServer time.Duration
	if serverCPU != nil {
		startServer = serverCPU()
	}
	for i := 0; b.Loop(); i++ {
		req.RequisitionID = "bench-" + strconv.Itoa(accounts) + "-" + strconv.Itoa(i%1000)
		start := time.Now()
		res, err := v.Validate(ctx, req)
		took = append(took, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if res[0].Status != budget.Valid {
			b.Fatalf("line 1: %v", res[0])
		}
	}
	b.StopTimer()
	if serverCPU != nil {
		if cpu := serverCPU() - startServer; cpu > 0 {
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(len(took)), "server-cpu-ns/op")
		}
	}
	if cpu := cputime.Process() - startCPU; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(len(took)), "cpu-ns/op")
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
}

// BenchmarkHotAccount checks 1,000 distinct requisitions at once against
// one account whose budget fits 400 of them, and reports checks per
// second. It fails when more than 400 hold, or when a check fails.
func BenchmarkHotAccount(b *testing.B, s budget.HoldStore) {
	t, err := budget.NewTable(map[string]decimal.Decimal{"HOT": decimal.New(400, 0)})
	if err != nil {
		b.Fatal(err)
	}
	v, err := budget.NewTableValidator(context.Background(), budget.TableConfig{Load: budget.StaticTable(t), Holds: s})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	ctx := context.Background()
	var total time.Duration
	checks := 0
	for round := 0; b.Loop(); round++ {
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			valid int
			first error
		)
		start := time.Now()
		for i := range 1000 {
			wg.Go(func() {
				res, err := v.Validate(ctx, budget.Request{
					RequisitionID: "hot-" + strconv.Itoa(round) + "-" + strconv.Itoa(i),
					Lines:         []budget.Line{{Number: 1, Account: "HOT", Amount: decimal.New(1, 0)}},
				})
				mu.Lock()
				defer mu.Unlock()
				if err != nil && first == nil {
					first = err
				}
				if err == nil && res[0].Status == budget.Valid {
					valid++
				}
			})
		}
		wg.Wait()
		total += time.Since(start)
		checks += 1000
		if first != nil {
			b.Fatal(first)
		}
		if valid != 400 {
			b.Fatalf("%d of 1000 checks passed on a budget for 400", valid)
		}
		for i := range 1000 {
			if _, err := v.Release(ctx, "hot-"+strconv.Itoa(round)+"-"+strconv.Itoa(i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(checks)/total.Seconds(), "checks/s")
}
