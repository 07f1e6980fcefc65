package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/jsontext"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

// testConfig is a file small enough to parse quickly and large enough
// that every proportion and enum value shows up.
func testConfig(seed uint64) config {
	c := config{Seed: seed, Suppliers: 3000, OtherSuppliers: -1, Users: 300, OtherUsers: -1, Communities: 3, Budgets: 40}
	c.defaults()
	return c
}

// gen generates a file into memory.
func gen(tb testing.TB, cfg config) ([]byte, *Manifest) {
	tb.Helper()
	var buf bytes.Buffer
	m, err := generate(&buf, cfg)
	if err != nil {
		tb.Fatalf("generate: %v", err)
	}
	return buf.Bytes(), m
}

var (
	parsedOnce sync.Once
	parsedRaw  []byte
	parsedMan  *Manifest
	parsedFile *datafile.File
	parsedErr  error
)

// parsed returns the test file, its manifest and datafile.Parse's view of
// it, computed once for all tests.
func parsed(tb testing.TB) ([]byte, *Manifest, *datafile.File) {
	tb.Helper()
	parsedOnce.Do(func() {
		var buf bytes.Buffer
		parsedMan, parsedErr = generate(&buf, testConfig(7))
		if parsedErr != nil {
			return
		}
		parsedRaw = buf.Bytes()
		parsedFile, parsedErr = datafile.Parse(bytes.NewReader(parsedRaw))
	})
	if parsedErr != nil {
		tb.Fatalf("generate and parse: %v", parsedErr)
	}
	return parsedRaw, parsedMan, parsedFile
}

// docs: datafile.md: the output is a data file that datafile.Parse
// accepts (it validates every supplier against docs: suppliers.md "SupplierSummary"-2.8) and that
// memstore loads.
func TestOutputIsAValidDataFile(t *testing.T) {
	raw, m, f := parsed(t)
	if !json.Valid(raw) {
		t.Fatal("output is not valid JSON")
	}
	if _, err := memstore.LoadReader(f.Reader()); err != nil {
		t.Fatalf("memstore.LoadReader: %v", err)
	}
	cfg := testConfig(7)
	if got, want := len(f.Communities), cfg.Communities; got != want {
		t.Fatalf("communities = %d, want %d", got, want)
	}
	var suppliers, users int
	for ci, c := range f.Communities {
		mc := m.Communities[ci]
		wantS, wantU := cfg.counts(ci)
		if len(c.Suppliers) != wantS || mc.Suppliers != wantS {
			t.Errorf("community %d: %d suppliers (manifest %d), want %d", ci, len(c.Suppliers), mc.Suppliers, wantS)
		}
		if len(c.Users) != wantU || mc.Users != wantU {
			t.Errorf("community %d: %d users (manifest %d), want %d", ci, len(c.Users), mc.Users, wantU)
		}
		if len(c.Budgets) != cfg.Budgets {
			t.Errorf("community %d: %d budgets, want %d", ci, len(c.Budgets), cfg.Budgets)
		}
		if c.ID != mc.ID || string(c.Region) != mc.Region {
			t.Errorf("community %d: id/region %s/%s, manifest %s/%s", ci, c.ID, c.Region, mc.ID, mc.Region)
		}
		suppliers += len(c.Suppliers)
		users += len(c.Users)
	}
	if suppliers != cfg.Suppliers || users != cfg.Users {
		t.Errorf("totals: %d suppliers, %d users; want %d, %d", suppliers, users, cfg.Suppliers, cfg.Users)
	}
	// The first community holds most of the data (90% by default).
	if got := len(f.Communities[0].Suppliers); got*10 < cfg.Suppliers*9 {
		t.Errorf("main community holds %d of %d suppliers, want 90%%", got, cfg.Suppliers)
	}
}

// The file exercises every enum value of docs: suppliers.md "SupplierSummary"-2.7 and section 3.
func TestEveryEnumValueOccurs(t *testing.T) {
	_, _, f := parsed(t)
	seen := map[string]map[string]bool{}
	add := func(kind, v string) {
		if v == "" {
			return
		}
		if seen[kind] == nil {
			seen[kind] = map[string]bool{}
		}
		seen[kind][v] = true
	}
	for _, c := range f.Communities {
		for _, s := range c.Suppliers {
			add("profileType", string(s.ProfileType))
			add("taxIdentificationType", string(s.TaxIdentificationType))
			add("tinVerificationStatus", string(s.TinVerificationStatus))
			add("connectionState", string(s.ConnectionState))
			if b := s.BankAccount; b != nil {
				add("bankAccountType", string(b.BankAccountType))
				add("depositFormat", string(b.DepositFormat))
			}
			if st := s.Settings; st != nil && st.PaymentTerm != nil {
				add("termType", string(st.PaymentTerm.TermType))
			}
			for _, ct := range s.Contacts {
				add("managedBy", string(ct.ManagedBy))
			}
			for _, a := range s.RemittanceAddresses {
				add("managedBy", string(a.ManagedBy))
			}
		}
		for _, u := range c.Users {
			if u.Enabled {
				add("enabled", "true")
			} else {
				add("enabled", "false")
			}
		}
	}
	want := map[string][]string{
		"profileType":           supplier.ProfileType("").Allowed(),
		"taxIdentificationType": supplier.TaxIdentificationType("").Allowed(),
		"tinVerificationStatus": supplier.TinVerificationStatus("").Allowed(),
		"connectionState":       supplier.ConnectionState("").Allowed(),
		"bankAccountType":       supplier.BankAccountType("").Allowed(),
		"depositFormat":         supplier.DepositFormat("").Allowed(),
		"termType":              supplier.TermType("").Allowed(),
		"managedBy":             supplier.TenantType("").Allowed(),
		"enabled":               {"false", "true"},
	}
	for kind, values := range want {
		var got []string
		for v := range seen[kind] {
			got = append(got, v)
		}
		slices.Sort(got)
		w := slices.Clone(values)
		slices.Sort(w)
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s values (-want +got):\n%s", kind, diff)
		}
	}
}

// Realism: unicode names, explicit nulls as well as absent fields, shared
// modifiedDates, local offsets, and the proportions of contacts and
// remittance addresses the brief asks for.
func TestRealisticShape(t *testing.T) {
	raw, _, f := parsed(t)
	main := f.Communities[0].Suppliers
	var nonASCII, nullName, individuals, withDetail int
	modified := map[time.Time]int{}
	contacts := map[int]int{}
	addresses := map[int]int{}
	defaultIsFirst := 0
	for _, s := range main {
		if s.Name.String() != "" && !isASCII(s.Name.String()) {
			nonASCII++
		}
		if s.Name.String() == "" {
			nullName++
		}
		if s.ProfileType == supplier.ProfileIndividual {
			individuals++
		}
		if s.BankAccount != nil && s.Emails != nil && s.Settings != nil {
			withDetail++
		}
		modified[s.ModifiedDate]++
		contacts[min(len(s.Contacts), 5)]++
		addresses[min(len(s.RemittanceAddresses), 3)]++
		if s.DefaultContact != nil {
			if len(s.Contacts) == 0 || s.Contacts[0].ID != s.DefaultContact.ID {
				t.Fatalf("supplier %s: defaultContact is not one of its contacts", s.ID)
			}
			defaultIsFirst++
		}
		if !utf8.ValidString(s.Name.String()) {
			t.Fatalf("supplier %s: name is not UTF-8", s.ID)
		}
	}
	n := len(main)
	pct := func(k int) float64 { return 100 * float64(k) / float64(n) }
	maxShared := 0
	for _, k := range modified {
		maxShared = max(maxShared, k)
	}
	checks := []struct {
		name string
		ok   bool
		got  any
	}{
		{"some names are not ASCII (>= 10%)", pct(nonASCII) >= 10, pct(nonASCII)},
		{"some names are null", nullName > 0, nullName},
		{"individuals 10-20%", pct(individuals) >= 10 && pct(individuals) <= 20, pct(individuals)},
		{"most suppliers have full details (>= 30%)", pct(withDetail) >= 30, pct(withDetail)},
		{"bulk imports: 50+ suppliers share a modifiedDate", maxShared >= 50, maxShared},
		{"contacts: 0 for 5-15%", pct(contacts[0]) >= 5 && pct(contacts[0]) <= 15, pct(contacts[0])},
		{"contacts: 1 or 2 for 65-85%", pct(contacts[1]+contacts[2]) >= 65 && pct(contacts[1]+contacts[2]) <= 85, pct(contacts[1] + contacts[2])},
		{"contacts: up to 5", contacts[5] > 0, contacts[5]},
		{"addresses: 1 for 65-85%", pct(addresses[1]) >= 65 && pct(addresses[1]) <= 85, pct(addresses[1])},
		{"addresses: some 0 and some 3", addresses[0] > 0 && addresses[3] > 0, addresses},
		{"defaultContact is set for most suppliers with contacts", defaultIsFirst*100 >= (n-contacts[0])*85, defaultIsFirst},
		{"explicit nulls in the file", bytes.Count(raw, []byte(`:null`)) > n, bytes.Count(raw, []byte(`:null`))},
		{"date-times with a local offset", bytes.Contains(raw, []byte(`+10:00"`)) && bytes.Contains(raw, []byte(`-05:00"`)), nil},
		{"empty child lists written as []", bytes.Contains(raw, []byte(`"contacts":[]`)), nil},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: got %v", c.name, c.got)
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// The manifest's expected counts agree with an independent reading of the
// file (docs: filters.md: case-insensitive starts-with on name,
// legalBusinessName, keywords or supplierId; modifiedSince inclusive), and
// its sample ids exist, so a load test can check a server's answers.
func TestManifestMatchesTheFile(t *testing.T) {
	_, m, f := parsed(t)
	for ci, c := range f.Communities {
		s := m.Communities[ci].Sample
		q := strings.ToLower(s.Query)
		since, err := time.Parse(time.RFC3339, s.ModifiedSince)
		if err != nil {
			t.Fatalf("community %d: modifiedSince %q: %v", ci, s.ModifiedSince, err)
		}
		var queryMatches, sinceMatches int
		var sample *supplier.Record
		for i := range c.Suppliers {
			r := &c.Suppliers[i]
			hit := strings.HasPrefix(strings.ToLower(r.Name.String()), q) ||
				strings.HasPrefix(strings.ToLower(r.LegalBusinessName.String()), q) ||
				strings.HasPrefix(strings.ToLower(r.SupplierID.String()), q)
			for _, k := range r.Keywords {
				hit = hit || strings.HasPrefix(strings.ToLower(k), q)
			}
			if hit {
				queryMatches++
			}
			if !r.ModifiedDate.Before(since) {
				sinceMatches++
			}
			if r.ID.String() == s.SupplierID {
				sample = r
			}
		}
		if queryMatches != s.QueryMatches || queryMatches == 0 {
			t.Errorf("community %d: query %q matches %d suppliers, manifest says %d", ci, q, queryMatches, s.QueryMatches)
		}
		if sinceMatches != s.ModifiedSinceMatches {
			t.Errorf("community %d: modifiedSince %s matches %d, manifest says %d", ci, s.ModifiedSince, sinceMatches, s.ModifiedSinceMatches)
		}
		if tenth := len(c.Suppliers) / 10; sinceMatches < tenth || sinceMatches > 2*tenth+5 {
			t.Errorf("community %d: modifiedSince matches %d of %d, want about a tenth", ci, sinceMatches, len(c.Suppliers))
		}
		if sample == nil || len(sample.Contacts) != 2 {
			t.Errorf("community %d: sample supplier %q missing or without exactly 2 contacts", ci, s.SupplierID)
		}
		byID := map[string]string{}
		for _, u := range c.Users {
			byID[u.ID] = u.Username
		}
		if len(s.Users) != min(100, len(c.Users)) {
			t.Errorf("community %d: %d sample users, want %d", ci, len(s.Users), min(100, len(c.Users)))
		}
		for _, u := range s.Users {
			if byID[u.ID] != u.Username {
				t.Errorf("community %d: sample user %s/%s not in the file", ci, u.ID, u.Username)
			}
		}
		// The read token is in the file with scope suppliers:read.
		var read string
		for _, tk := range m.Communities[ci].Tokens {
			if tk.Kind == "read" {
				read = tk.Token
			}
		}
		found := false
		for _, tk := range c.Tokens {
			found = found || tk.Token == read && slices.Contains(tk.Scopes, "suppliers:read") && !tk.Revoked && tk.Expires == nil
		}
		if !found {
			t.Errorf("community %d: manifest read token is not an active suppliers:read token of the file", ci)
		}
	}
}

// Same seed and flags: same bytes. Another seed: other data, other secrets.
func TestDeterministic(t *testing.T) {
	cfg := testConfig(42)
	cfg.Suppliers, cfg.Users = 500, 50
	cfg.OtherSuppliers, cfg.OtherUsers = -1, -1
	cfg.defaults()
	a, ma := gen(t, cfg)
	b, mb := gen(t, cfg)
	if sha256.Sum256(a) != sha256.Sum256(b) {
		t.Fatal("two runs with the same seed wrote different bytes")
	}
	if diff := cmp.Diff(ma, mb); diff != "" {
		t.Fatalf("manifests differ (-first +second):\n%s", diff)
	}
	cfg.Seed = 43
	c, mc := gen(t, cfg)
	if bytes.Equal(a, c) {
		t.Fatal("seeds 42 and 43 wrote the same bytes")
	}
	if ma.Communities[0].Tokens[0].Token == mc.Communities[0].Tokens[0].Token {
		t.Fatal("seeds 42 and 43 gave the same read token")
	}
}

// Secrets are unique within a file (datafile rejects a repeated token).
func TestSecretsAreDistinct(t *testing.T) {
	_, m, _ := parsed(t)
	seen := map[string]bool{}
	for _, c := range m.Communities {
		for _, tk := range c.Tokens {
			if seen[tk.Token] {
				t.Errorf("token of kind %s repeats", tk.Kind)
			}
			seen[tk.Token] = true
		}
		for _, a := range c.ServiceAccounts {
			if seen[a.Key] {
				t.Errorf("key of %s repeats", a.ID)
			}
			seen[a.Key] = true
		}
	}
}

// heapSampler is a writer that records the peak live heap while the
// generator writes through it: every 2 MB it collects garbage and reads
// what is still reachable.
type heapSampler struct {
	n, next int64
	peak    uint64
}

func (h *heapSampler) Write(p []byte) (int, error) {
	h.n += int64(len(p))
	if h.n >= h.next {
		h.next = h.n + 2<<20
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.peak = max(h.peak, ms.HeapAlloc)
	}
	return len(p), nil
}

// Streaming: ten times the suppliers, ten times the output, the same
// live memory. A generator that built the file (or its records) in memory
// would hold tens of megabytes more at the larger size.
func TestMemoryDoesNotGrowWithSize(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 60 MB")
	}
	measure := func(n int) (written int64, peak uint64) {
		cfg := config{Seed: 3, Suppliers: n, OtherSuppliers: -1, Users: n / 10, OtherUsers: -1, Communities: 2, Budgets: 100}
		cfg.defaults()
		h := &heapSampler{}
		if _, err := generate(h, cfg); err != nil {
			t.Fatal(err)
		}
		return h.n, h.peak
	}
	smallN, smallPeak := measure(2000)
	largeN, largePeak := measure(20000)
	t.Logf("2000 suppliers: %d bytes written, peak live heap %d; 20000: %d bytes, peak live heap %d", smallN, smallPeak, largeN, largePeak)
	if largeN < 9*smallN {
		t.Fatalf("output did not grow with N: %d then %d bytes", smallN, largeN)
	}
	// The live heap of the tests' shared data is in both figures; what
	// the generator holds must not grow by more than a few buffers.
	if largePeak > smallPeak+2<<20 {
		t.Errorf("peak live heap grew from %d to %d bytes while the output grew from %d to %d", smallPeak, largePeak, smallN, largeN)
	}
}

func TestFlags(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no communities", []string{"-communities", "0"}, "-communities: must be at least 1"},
		{"negative suppliers", []string{"-suppliers", "-1"}, "-suppliers: must be >= 0"},
		{"negative users", []string{"-users", "-5"}, "-users: must be >= 0"},
		{"too many budgets", []string{"-budgets", "5000"}, "-budgets: must be at most 900"},
		{"others exceed total", []string{"-suppliers", "10", "-other-suppliers", "11"}, "-other-suppliers: 1 communities x 11 is more than -suppliers 10"},
		{"stray argument", []string{"extra"}, `unexpected argument "extra"`},
		{"unknown flag", []string{"-nope"}, "flag provided but not defined: -nope"},
		{"missing directory", []string{"-suppliers", "1", "-o", filepath.Join(dir, "no", "such", "dir.json")}, "no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(tt.args, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("run(%q) = %v, want an error containing %q", tt.args, err, tt.wantErr)
			}
			if stdout.Len() != 0 {
				t.Errorf("wrote %d bytes to stdout on error", stdout.Len())
			}
		})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("failed runs left files behind: %v", entries)
	}
}

// -o and -manifest write files (the data file atomically) and the demo
// credentials go to stderr; without -o the file goes to stdout.
func TestRunWritesFilesAndCredentials(t *testing.T) {
	dir := t.TempDir()
	out, man := filepath.Join(dir, "data.json"), filepath.Join(dir, "manifest.json")
	var stdout, stderr bytes.Buffer
	args := []string{"-suppliers", "50", "-users", "10", "-seed", "9", "-o", out, "-manifest", man}
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout has %d bytes with -o", stdout.Len())
	}
	f, err := datafile.ReadFile(out)
	if err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	mb, err := os.ReadFile(man)
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	if len(m.Communities) != len(f.Communities) || m.Seed != 9 {
		t.Fatalf("manifest has %d communities, seed %d; file has %d", len(m.Communities), m.Seed, len(f.Communities))
	}
	log := stderr.String()
	for _, c := range m.Communities {
		for _, tk := range c.Tokens {
			if !strings.Contains(log, tk.Token) {
				t.Errorf("stderr lacks the %s token of %s", tk.Kind, c.ID)
			}
		}
		for _, a := range c.ServiceAccounts {
			if !strings.Contains(log, a.ID+" key "+a.Key) {
				t.Errorf("stderr lacks service account %s and its key", a.ID)
			}
		}
	}
	if !strings.Contains(log, "wrote 50 suppliers, 10 users in 2 communities") {
		t.Errorf("stderr summary: %q", log)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".data.json.tmp-*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}

	// To stdout, quietly: the same bytes as the file.
	stdout.Reset()
	stderr.Reset()
	if err := run([]string{"-suppliers", "50", "-users", "10", "-seed", "9", "-q"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	fileBytes, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stdout.Bytes(), fileBytes) {
		t.Error("stdout output differs from the -o file")
	}
	if stderr.Len() != 0 {
		t.Errorf("-q printed %q", stderr.String())
	}
}

// A writer failure stops the run and is reported.
func TestWriteErrorIsReported(t *testing.T) {
	cfg := testConfig(1)
	_, err := generate(failingWriter{after: 100000}, cfg)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("generate = %v, want the writer's error", err)
	}
}

type failingWriter struct{ after int }

func (f failingWriter) Write(p []byte) (int, error) { return 0, errors.New("disk full") }

func TestAppendString(t *testing.T) {
	tests := []struct{ name, in string }{
		{"plain", "Acme"},
		{"quote and backslash", `a "b" \c`},
		{"controls", "line\nbreak\ttab\r\x00\x1f"},
		{"unicode", "Ōtautahi 北京 🌿"},
		{"line separators", "a\u2028b\u2029c"},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := jsontext.AppendString(nil, tt.in)
			var got string
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("unmarshal %s: %v", b, err)
			}
			if got != tt.in {
				t.Fatalf("round trip: got %q, want %q", got, tt.in)
			}
			if bytes.ContainsRune(b, '\u2028') {
				t.Errorf("U+2028 not escaped: %s", b)
			}
		})
	}
}

// A store loaded from the file answers list queries (a smoke test of the
// whole path the example server takes; the store's behaviour is tested
// in its own package).
func TestStoreServesGeneratedData(t *testing.T) {
	_, m, f := parsed(t)
	st, err := memstore.LoadReader(f.Reader())
	if err != nil {
		t.Fatal(err)
	}
	ss, ok := any(st).(supplier.Store)
	if !ok {
		t.Skip("memstore does not implement supplier.Store yet")
	}
	mc := m.Communities[0]
	p, err := ss.ListSuppliers(context.Background(), mc.ID, supplier.ListQuery{Query: mc.Sample.Query, Page: paging.Request{Size: paging.DefaultSize, Sort: supplier.ListPaging.DefaultSort}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Page.TotalElements != mc.Sample.QueryMatches {
		t.Errorf("query %q: store finds %d, manifest says %d", mc.Sample.Query, p.Page.TotalElements, mc.Sample.QueryMatches)
	}
	us, ok := any(st).(user.Store)
	if !ok {
		return
	}
	for _, mu := range mc.Sample.Users[:10] {
		// docs: users.md: the lookup is case-insensitive.
		u, err := us.UserByUsername(context.Background(), mc.ID, strings.ToUpper(mu.Username))
		if err != nil || u.ID != mu.ID {
			t.Errorf("UserByUsername(%s) = %s, %v; want id %s", mu.Username, u.ID, err, mu.ID)
		}
	}
}

// Edge sizes still give files that datafile.Parse accepts.
func TestEdgeSizes(t *testing.T) {
	tests := []struct {
		name string
		cfg  config
	}{
		{"empty", config{Seed: 1, Communities: 1, OtherSuppliers: -1, OtherUsers: -1}},
		{"one supplier, five communities", config{Seed: 1, Suppliers: 1, Users: 1, Communities: 5, OtherSuppliers: -1, OtherUsers: -1, Budgets: 1}},
		{"every budget row", config{Seed: 1, Suppliers: 10, Users: 10, Communities: 2, OtherSuppliers: 5, OtherUsers: 0, Budgets: maxBudgets}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.defaults()
			if err := cfg.validate(); err != nil {
				t.Fatal(err)
			}
			raw, m := gen(t, cfg)
			f, err := datafile.Parse(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("datafile.Parse: %v", err)
			}
			if len(f.Communities) != cfg.Communities || len(m.Communities) != cfg.Communities {
				t.Fatalf("%d communities (manifest %d), want %d", len(f.Communities), len(m.Communities), cfg.Communities)
			}
			for ci, c := range f.Communities {
				s, u := cfg.counts(ci)
				if len(c.Suppliers) != s || len(c.Users) != u || len(c.Budgets) != cfg.Budgets {
					t.Errorf("community %d: %d/%d/%d suppliers/users/budgets, want %d/%d/%d", ci, len(c.Suppliers), len(c.Users), len(c.Budgets), s, u, cfg.Budgets)
				}
			}
		})
	}
}

// BenchmarkGenerate writes 10,000 suppliers (and 1,000 users) per
// operation to io.Discard.
func BenchmarkGenerate(b *testing.B) {
	cfg := config{Seed: 1, Suppliers: 10000, Users: 1000, Communities: 2, OtherSuppliers: -1, OtherUsers: -1, Budgets: 100}
	cfg.defaults()
	cw := &countingWriter{w: io.Discard}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := generate(cw, cfg); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(cw.n / int64(b.N))
	b.ReportMetric(float64(cfg.Suppliers)*float64(b.N)/b.Elapsed().Seconds(), "suppliers/s")
}

// -contacts and -addresses give every supplier exactly that many (the
// startup target's shape is one of each), and the file stays valid.
func TestFixedChildren(t *testing.T) {
	for _, n := range [][2]int{{1, 1}, {3, 2}} {
		t.Run(fmt.Sprintf("%d contacts, %d addresses", n[0], n[1]), func(t *testing.T) {
			cfg := config{Seed: 4, Suppliers: 300, OtherSuppliers: -1, Users: 10, OtherUsers: -1, Communities: 2, Budgets: 3,
				Contacts: n[0], Addresses: n[1]}
			cfg.defaults()
			if err := cfg.validate(); err != nil {
				t.Fatal(err)
			}
			raw, _ := gen(t, cfg)
			f, err := datafile.Parse(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("datafile.Parse: %v", err)
			}
			for ci, c := range f.Communities {
				for si, s := range c.Suppliers {
					if len(s.Contacts) != n[0] || len(s.RemittanceAddresses) != n[1] {
						t.Fatalf("communities[%d].suppliers[%d]: %d contacts, %d addresses; want %d, %d", ci, si, len(s.Contacts), len(s.RemittanceAddresses), n[0], n[1])
					}
				}
			}
		})
	}
	for _, bad := range []config{{Communities: 1, Contacts: -1}, {Communities: 1, Addresses: maxChildren + 1}} {
		if err := bad.validate(); err == nil {
			t.Errorf("validate(%+v) accepted a count out of range", bad)
		}
	}
}
