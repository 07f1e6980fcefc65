package suppliers_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/google/uuid"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi/suppliers"
	"github.com/procurekit/procure/internal/cputime"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
)

var randomReads = flag.Int("randomreads", 100_000, "suppliers in BenchmarkRandomReads' community")

// BenchmarkRandomReads is the load test's random-supplier and random-page
// scenarios in process: a community of -randomreads distinct synthetic
// suppliers (suppliertest.Synthetic: every text its own allocation, as a
// data file's decoder leaves them), loaded from a data file as
// examples/server loads one, and 65,536 requests drawn at random over all
// of them, so that the reads miss the CPU's caches as users' do and the
// encoded-supplier memo rarely holds what is asked. cpu-ns/op is the
// benchmark thread's CPU time per request.
func BenchmarkRandomReads(b *testing.B) {
	n := *randomReads
	recs := suppliertest.Synthetic(n)
	benchRandom(b, recs, true)
}

// BenchmarkRandomDetails is BenchmarkRandomReads' supplier requests over
// suppliers in full, as examples/gendata makes them and the load test
// asks for them: each with a default contact (and its phone), a default
// remittance address, a bank account, emails and settings, every text its
// own. An answer is about 2 KB, and its parts lie in as many places in
// memory as a decoder put them: this is the benchmark of the encoder's
// cache misses (supplierjson's touch).
func BenchmarkRandomDetails(b *testing.B) {
	n := *randomReads
	recs := suppliertest.Synthetic(n)
	for i := range recs {
		fillParts(&recs[i], i)
	}
	benchRandom(b, recs, false)
}

// fillParts gives r, the i-th synthetic supplier, the parts a gendata
// supplier has.
func fillParts(r *supplier.Record, i int) {
	host := fmt.Sprintf("supplier-%d.example", i)
	c := r.Contacts[0]
	c.Name = fmt.Sprintf("Contact %d", i)
	c.Email = supplier.NewText("ap@" + host)
	c.Phone = &supplier.Phone{Prefix: supplier.NewText("+64"), Number: supplier.NewText(fmt.Sprintf("9 555 %04d", i%10_000))}
	r.Contacts[0] = c
	r.DefaultContact = &c
	a := r.RemittanceAddresses[0]
	r.DefaultRemittanceAddress = &a
	id := r.ID
	id[0] ^= 0xff
	r.BankAccount = &supplier.BankAccount{ID: id, Country: "New Zealand", BankName: supplier.NewText("Kiwibank"),
		AccountNumber: supplier.NewText(fmt.Sprintf("38-9000-%07d-00", i)), RoutingNumber: supplier.NewText("389000"),
		BankAccountType: supplier.Checking}
	r.Emails = &supplier.Emails{
		DefaultEmailAddress:     r.DefaultEmailAddress,
		RemittanceEmailAddress:  supplier.NewText("remittance@" + host),
		InvoicingEmailAddress:   supplier.NewText("invoices@" + host),
		IntegrationEmailAddress: supplier.NewText("edi@" + host),
	}
	id[1] ^= 0xff
	r.Settings = &supplier.Settings{
		PaymentTerm: &supplier.PaymentTerm{ID: uuid.MustParse("b1150379-e48f-417d-8c39-e6e5b4a1cbef"), Code: "NET7", Active: true, TermType: supplier.DaysAfterInvoiceDate},
		BuyerGroups: []supplier.BuyerGroup{{ID: id, Name: "All Buyers"}},
	}
}

// benchRandom loads recs as examples/server loads a data file and runs
// random supplier requests, and with pages random page requests, over
// them.
func benchRandom(b *testing.B, recs []supplier.Record, pages bool) {
	n := len(recs)
	ids := make([]string, n)
	for i := range recs {
		ids[i] = recs[i].ID.String()
	}
	f := &datafile.File{Communities: []datafile.Community{{
		ID: "bench", Name: "Bench", Region: datafile.NZ, Suppliers: recs,
		Tokens: []datafile.Token{{Token: alphaToken, Scopes: []string{"suppliers:read"}}},
	}}}
	store, err := memstore.LoadReader(f.Reader())
	if err != nil {
		b.Fatal(err)
	}
	recs, f = nil, nil
	runtime.GC()
	mux := http.NewServeMux()
	suppliers.Mount(mux, suppliers.Options{Store: store, Tokens: store, Logger: discard})
	targets := func(f func(rng *rand.Rand) string) []*http.Request {
		rng := rand.New(rand.NewPCG(7, 7))
		reqs := make([]*http.Request, 1<<16)
		for i := range reqs {
			reqs[i] = httptest.NewRequest(http.MethodGet, f(rng), nil)
			reqs[i].Header.Set("Authorization", "Bearer "+alphaToken)
		}
		return reqs
	}
	type benchCase struct {
		name string
		reqs []*http.Request
	}
	cases := []benchCase{{"supplier", targets(func(rng *rand.Rand) string { return base + "/suppliers/" + ids[rng.IntN(n)] })}}
	if pages {
		cases = append(cases, benchCase{"page", targets(func(rng *rand.Rand) string { return fmt.Sprintf("%s/suppliers?page=%d", base, rng.IntN(n/20)) })})
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			w := &nullWriter{h: http.Header{}}
			b.ReportAllocs()
			defer cputime.PerOp(b)()
			i := 0
			for b.Loop() {
				clear(w.h)
				w.status = 0
				mux.ServeHTTP(w, tc.reqs[i%len(tc.reqs)])
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
				i++
			}
		})
	}
}
