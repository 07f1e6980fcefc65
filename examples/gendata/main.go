// Command gendata writes a realistic, deterministic data file in the format
// of docs: datafile.md (package datafile): communities with bearer
// tokens, service accounts, auto-roles, suppliers in full detail with their
// keywords, contacts and remittance addresses, users and budget tables.
//
//	go run ./examples/gendata -suppliers 100000 -users 1000 -o data.json
//
// The same flags and -seed always give the same bytes. The file streams out
// one record at a time, so memory stays flat whatever the size (about 8 MB
// resident): 100,000 suppliers (287 MB) take under a second on an idle
// 2-core machine, 1,000,000 (2.9 GB) about 20 seconds on a busy one.
//
// The data looks like a real supplier master: the first community holds
// most of the suppliers and users (90% by default); names mix ASCII with
// accented, macronned, CJK, Greek and Cyrillic text and an emoji; optional
// fields are present, null or absent; batches of suppliers share a
// modifiedDate (bulk imports); a few date-times carry a local UTC offset;
// every enum value occurs; most suppliers have one or two contacts and one
// remittance address, some none and some up to five and three.
//
// The demo credentials (bearer tokens of each kind, service account ids and
// keys) are printed to standard error. They are derived from the seed: they
// are demo data, not secrets. -manifest FILE also writes them, with sample
// ids, a query prefix and a modifiedSince value and how many suppliers each
// matches, as JSON for load tests (bench/cmd/loadtest reads it).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	os.Exit(exitStatus(run(os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}

// exitStatus reports err (but for -h, whose usage is printed already)
// and returns the exit status: 0 on success and for -h, 2 otherwise.
func exitStatus(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintln(stderr, "gendata:", err)
	return 2
}

// config is what the flags set.
type config struct {
	Seed uint64
	// Suppliers is the total over all communities; the other communities
	// hold OtherSuppliers each and the first holds the rest.
	Suppliers      int
	OtherSuppliers int
	// Users is split the same way (OtherUsers each for the others).
	Users       int
	OtherUsers  int
	Communities int
	// Budgets is the number of budget rows per community.
	Budgets int
	// Contacts and Addresses, when above zero, fix the number of contacts
	// and remittance addresses of every supplier (the startup target's
	// shape: one of each); zero draws a realistic number per supplier.
	Contacts  int
	Addresses int
}

// defaults fills in the share of the non-main communities: a tenth of
// the total, spread evenly, unless set (>= 0).
func (c *config) defaults() {
	if c.Communities > 1 {
		if c.OtherSuppliers < 0 {
			c.OtherSuppliers = c.Suppliers / (10 * (c.Communities - 1))
		}
		if c.OtherUsers < 0 {
			c.OtherUsers = c.Users / (10 * (c.Communities - 1))
		}
	} else {
		c.OtherSuppliers, c.OtherUsers = 0, 0
	}
}

func (c *config) validate() error {
	switch {
	case c.Communities < 1:
		return fmt.Errorf("-communities: must be at least 1 (got %d)", c.Communities)
	case c.Suppliers < 0:
		return fmt.Errorf("-suppliers: must be >= 0 (got %d)", c.Suppliers)
	case c.Users < 0:
		return fmt.Errorf("-users: must be >= 0 (got %d)", c.Users)
	case c.Budgets < 0:
		return fmt.Errorf("-budgets: must be >= 0 (got %d)", c.Budgets)
	case c.Contacts < 0 || c.Contacts > maxChildren:
		return fmt.Errorf("-contacts: must be at most %d (got %d)", maxChildren, c.Contacts)
	case c.Addresses < 0 || c.Addresses > maxChildren:
		return fmt.Errorf("-addresses: must be at most %d (got %d)", maxChildren, c.Addresses)
	case c.Budgets > maxBudgets:
		return fmt.Errorf("-budgets: must be at most %d (got %d)", maxBudgets, c.Budgets)
	case c.OtherSuppliers*(c.Communities-1) > c.Suppliers:
		return fmt.Errorf("-other-suppliers: %d communities x %d is more than -suppliers %d", c.Communities-1, c.OtherSuppliers, c.Suppliers)
	case c.OtherUsers*(c.Communities-1) > c.Users:
		return fmt.Errorf("-other-users: %d communities x %d is more than -users %d", c.Communities-1, c.OtherUsers, c.Users)
	}
	return nil
}

// counts returns how many suppliers and users community ci holds.
func (c *config) counts(ci int) (suppliers, users int) {
	if ci > 0 {
		return c.OtherSuppliers, c.OtherUsers
	}
	others := c.Communities - 1
	return c.Suppliers - others*c.OtherSuppliers, c.Users - others*c.OtherUsers
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gendata", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := config{}
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed; the same seed and flags give the same bytes")
	fs.IntVar(&cfg.Suppliers, "suppliers", 10000, "suppliers in all, over all communities")
	fs.IntVar(&cfg.OtherSuppliers, "other-suppliers", -1, "suppliers in each community but the first (default: a tenth of -suppliers, spread evenly)")
	fs.IntVar(&cfg.Users, "users", 1000, "users in all, over all communities")
	fs.IntVar(&cfg.OtherUsers, "other-users", -1, "users in each community but the first (default: a tenth of -users, spread evenly)")
	fs.IntVar(&cfg.Communities, "communities", 2, "number of communities; regions cycle AU, NZ, US, DEMO")
	fs.IntVar(&cfg.Budgets, "budgets", 100, "budget table rows per community")
	fs.IntVar(&cfg.Contacts, "contacts", 0, "contacts of every supplier (0: a realistic mix, 1.6 on average)")
	fs.IntVar(&cfg.Addresses, "addresses", 0, "remittance addresses of every supplier (0: a realistic mix, 1.14 on average)")
	out := fs.String("o", "", "write the data file to `FILE` (default: standard output)")
	manifest := fs.String("manifest", "", "also write credentials, sample ids and expected match counts as JSON to `FILE`")
	quiet := fs.Bool("q", false, "print nothing on standard error but errors")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: gendata [flags]\n\nWrites a deterministic procurement data file (see package datafile).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg.defaults()
	if err := cfg.validate(); err != nil {
		return err
	}

	start := time.Now()
	var m *Manifest
	var size int64
	var err error
	if *out == "" {
		cw := &countingWriter{w: stdout}
		m, err = generate(cw, cfg)
		size = cw.n
	} else {
		m, size, err = writeFileAtomic(*out, func(w io.Writer) (*Manifest, error) { return generate(w, cfg) })
	}
	if err != nil {
		return err
	}
	if *manifest != "" {
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*manifest, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if !*quiet {
		where := "standard output"
		if *out != "" {
			where = *out
		}
		printSummary(stderr, m, where, size, time.Since(start))
	}
	return nil
}

// writeFileAtomic writes through a temporary file beside path and renames
// it into place, so that a failed or interrupted run never leaves a
// truncated data file behind.
func writeFileAtomic(path string, write func(io.Writer) (*Manifest, error)) (*Manifest, int64, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, 0, err
	}
	tmp := f.Name()
	cw := &countingWriter{w: f}
	m, err := write(cw)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp) // best effort; the write error is what matters
		return nil, 0, err
	}
	return m, cw.n, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func printSummary(w io.Writer, m *Manifest, where string, size int64, took time.Duration) {
	var suppliers, users int
	for _, c := range m.Communities {
		suppliers += c.Suppliers
		users += c.Users
	}
	fmt.Fprintf(w, "gendata: wrote %d suppliers, %d users in %d communities to %s (%.1f MB, seed %d, %.1fs)\n",
		suppliers, users, len(m.Communities), where, float64(size)/1e6, m.Seed, took.Seconds())
	fmt.Fprintln(w, "demo credentials (generated from the seed; for local testing only):")
	for _, c := range m.Communities {
		fmt.Fprintf(w, "  community %s (%s): %d suppliers, %d users\n", c.ID, c.Region, c.Suppliers, c.Users)
		for _, t := range c.Tokens {
			fmt.Fprintf(w, "    bearer token %-9s %s\n", t.Kind, t.Token)
		}
		for _, a := range c.ServiceAccounts {
			allow := "any address"
			if len(a.AllowedIPs) > 0 {
				allow = "from " + strings.Join(a.AllowedIPs, ", ")
			}
			fmt.Fprintf(w, "    service account %s key %s (%s)\n", a.ID, a.Key, allow)
		}
	}
}

// Manifest describes a generated file for programs that drive it: the
// demo credentials, and per community sample ids and queries with the
// number of suppliers each matches (to check a server's answers against).
type Manifest struct {
	Seed        uint64              `json:"seed"`
	Communities []ManifestCommunity `json:"communities"`
}

// ManifestCommunity is one community of a Manifest.
type ManifestCommunity struct {
	ID              string          `json:"id"`
	Name            string          `json:"name"`
	Region          string          `json:"region"`
	Suppliers       int             `json:"suppliers"`
	Users           int             `json:"users"`
	Tokens          []ManifestToken `json:"tokens"`
	ServiceAccounts []ManifestAcct  `json:"serviceAccounts"`
	Sample          ManifestSample  `json:"sample"`
}

// ManifestToken is a bearer token; Kind is "read" (scope suppliers:read),
// "noscope" (valid, no scope: 403), "expired" or "revoked" (401).
type ManifestToken struct {
	Kind  string `json:"kind"`
	Token string `json:"token"`
}

// ManifestAcct is a service account with its active key.
type ManifestAcct struct {
	ID         string   `json:"id"`
	Key        string   `json:"key"`
	AllowedIPs []string `json:"allowedIPs,omitempty"`
}

// ManifestSample holds values to query a community with.
type ManifestSample struct {
	// SupplierID is a supplier with exactly two contacts (empty if none).
	SupplierID string `json:"supplierId,omitempty"`
	// Query is a lower-case name prefix; QueryMatches suppliers match it
	// (docs: filters.md: case-insensitive starts-with on name,
	// legalBusinessName, keywords or supplierId).
	Query        string `json:"query"`
	QueryMatches int    `json:"queryMatches"`
	// ModifiedSince is a day (00:00 UTC) that about a tenth of the
	// suppliers were modified at or after; ModifiedSinceMatches of them.
	ModifiedSince        string `json:"modifiedSince,omitempty"`
	ModifiedSinceMatches int    `json:"modifiedSinceMatches"`
	// Users are the first users of the community (at most 100).
	Users []ManifestUser `json:"users,omitempty"`
}

// ManifestUser identifies a user.
type ManifestUser struct {
	ID       string `json:"id"`
	Username string `json:"username"`
}

// generate writes the whole file to w and returns its manifest.
func generate(w io.Writer, cfg config) (*Manifest, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	g := &generator{cfg: cfg, w: bw, man: &Manifest{Seed: cfg.Seed}}
	g.e.b = make([]byte, 0, 16<<10)
	if _, err := bw.WriteString(`{"communities":[`); err != nil {
		return nil, err
	}
	for ci := 0; ci < cfg.Communities; ci++ {
		if ci > 0 {
			g.write(",")
		}
		g.community(ci)
		if g.err != nil {
			return nil, g.err
		}
	}
	g.write("\n]}\n")
	if g.err != nil {
		return nil, g.err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	return g.man, nil
}

// The time range of the data: created dates from firstDay, everything
// before lastInstant. Fixed, so the output does not depend on the clock.
var (
	firstDay    = time.Date(2012, 1, 1, 0, 0, 0, 0, time.UTC)
	lastCreated = time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)
	lastInstant = time.Date(2026, 4, 30, 0, 0, 0, 0, time.UTC)
	// bulkImports are instants at which many suppliers were modified at
	// once, so that modifiedDate ties are common (ties break on id).
	bulkImports = []time.Time{
		time.Date(2019, 7, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2022, 2, 14, 9, 30, 0, 0, time.UTC),
		time.Date(2024, 11, 30, 23, 59, 59, 999999000, time.UTC),
		time.Date(2025, 6, 30, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 5, 3, 0, 0, 123000, time.UTC),
	}
	regionZones = map[string]*time.Location{
		"AU":   time.FixedZone("AEST", 10*3600),
		"NZ":   time.FixedZone("NZST", 12*3600),
		"US":   time.FixedZone("EST", -5*3600),
		"DEMO": time.FixedZone("IST", 5*3600+1800),
	}
)

type generator struct {
	cfg config
	w   *bufio.Writer
	err error
	e   enc
	r   *rand.Rand
	man *Manifest
	c   *community
}

// community is the state of the community being written: its
// community-wide lists, and the tallies behind its manifest sample.
type community struct {
	index      int
	id, region string
	places     []place
	loc        *time.Location
	terms      []paymentTerm
	groups     []named
	tags       []named
	sample     *ManifestSample
	query      string
	modDays    []int // suppliers modified on each day since firstDay
}

type named struct {
	id   [16]byte
	name string
}

type paymentTerm struct {
	id          [16]byte
	code        string
	active      bool
	days        int // < 0: null
	termType    string
	description string
	descShape   presence
}

func (g *generator) write(s string) {
	if g.err == nil {
		_, g.err = g.w.WriteString(s)
	}
}

// flush hands the record in the buffer to the writer.
func (g *generator) flush() {
	if g.err == nil {
		_, g.err = g.w.Write(g.e.b)
	}
	g.e.reset()
}

// pick returns i with probability weights[i]/sum(weights).
func (g *generator) pick(weights ...int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := g.r.IntN(total)
	for i, w := range weights {
		if n < w {
			return i
		}
		n -= w
	}
	return len(weights) - 1
}

// shape draws how an optional field appears: present, null or absent,
// with the given percentages for the first two.
func (g *generator) shape(presentPct, nullPct int) presence {
	return presence(g.pick(presentPct, nullPct, 100-presentPct-nullPct))
}

func (g *generator) chance(pct int) bool { return g.r.IntN(100) < pct }

// uuid draws a version 4 UUID.
func (g *generator) uuid() [16]byte {
	var id [16]byte
	a, b := g.r.Uint64(), g.r.Uint64()
	for i := 0; i < 8; i++ {
		id[i] = byte(a >> (8 * i))
		id[8+i] = byte(b >> (8 * i))
	}
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}

// instant draws a time in [from, to): whole seconds, or with microseconds
// (PostgreSQL's precision) 60% of the time.
func (g *generator) instant(from, to time.Time) time.Time {
	span := int64(to.Sub(from) / time.Second)
	if span <= 0 {
		return from
	}
	t := from.Add(time.Duration(g.r.Int64N(span)) * time.Second)
	if g.chance(60) {
		t = t.Add(time.Duration(g.r.IntN(1000000)) * time.Microsecond)
	}
	return t
}

// stamp writes t in UTC, or 3% of the time in the region's local offset.
func (g *generator) stamp(t time.Time) stamp {
	if g.chance(3) {
		return stamp{t: t, loc: g.c.loc}
	}
	return stamp{t: t}
}

// secret derives a demo secret from the seed, the community and a label;
// it does not draw from the data stream, so changing one list's size does
// not change the credentials.
func secret(seed uint64, ci int, label string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(label)) // a hash.Hash never fails to write
	r := rand.New(rand.NewPCG(seed^0x5ec4e7, uint64(ci)<<56^h.Sum64()))
	var b [12]byte
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	var out []byte
	for _, x := range b {
		out = append(out, hexDigits[x>>4], hexDigits[x&0xf])
	}
	return string(out)
}

func (g *generator) community(ci int) {
	cfg := g.cfg
	// Each community draws from its own stream, so that its data does not
	// depend on the sizes of the communities before it.
	g.r = rand.New(rand.NewPCG(cfg.Seed, 0x70726f63757265+uint64(ci)))
	id, name := communityID(ci)
	region := regions[ci%len(regions)]
	nSup, nUsers := cfg.counts(ci)
	c := &community{
		index:  ci,
		id:     id,
		region: region,
		places: places[region],
		loc:    regionZones[region],
		sample: &ManifestSample{},
	}
	g.c = c
	mc := ManifestCommunity{ID: id, Name: name, Region: region, Suppliers: nSup, Users: nUsers}

	e := &g.e
	e.reset()
	e.b = append(e.b, '\n')
	e.openObj()
	e.fStr("id", id)
	e.fStr("name", name)
	e.fStr("region", region)

	// Tokens: one of each kind, so every authentication outcome can be
	// tried against the generated data.
	tokens := []struct {
		kind   string
		scopes string
		extra  func()
	}{
		{"read", `["suppliers:read"]`, nil},
		{"noscope", `[]`, nil},
		{"expired", `["suppliers:read"]`, func() { e.fTime("expires", stamp{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}) }},
		{"revoked", `["suppliers:read"]`, func() { e.fBool("revoked", true) }},
	}
	e.key("tokens")
	e.openArr()
	for _, t := range tokens {
		tok := "demo-" + id + "-" + t.kind + "-" + secret(cfg.Seed, ci, "token-"+t.kind)
		mc.Tokens = append(mc.Tokens, ManifestToken{Kind: t.kind, Token: tok})
		e.elem()
		e.openObj()
		e.fStr("token", tok)
		e.key("scopes")
		e.raw(t.scopes)
		if t.extra != nil {
			t.extra()
		}
		e.closeObj()
	}
	e.closeArr()

	// Service accounts: the main one has an active and a retired key (a
	// rotation under way) and no allowlist; the second is locked to a
	// documentation network, so requests from here are refused; other
	// communities' accounts allow loopback only.
	type account struct {
		id      string
		allowed []string
	}
	accounts := []account{{id: "sa-" + id}}
	if ci == 0 {
		accounts = append(accounts, account{id: "sa-" + id + "-erp", allowed: []string{"203.0.113.0/24", "2001:db8::/32"}})
	} else {
		accounts[0].allowed = []string{"127.0.0.1", "::1"}
	}
	e.key("serviceAccounts")
	e.openArr()
	for ai, a := range accounts {
		key := "demo-key-" + secret(cfg.Seed, ci, "key-"+a.id)
		old := "demo-key-old-" + secret(cfg.Seed, ci, "old-"+a.id)
		mc.ServiceAccounts = append(mc.ServiceAccounts, ManifestAcct{ID: a.id, Key: key, AllowedIPs: a.allowed})
		e.elem()
		e.openObj()
		e.fStr("id", a.id)
		e.key("keys")
		e.openArr()
		e.elem()
		e.openObj()
		e.fStr("key", key)
		e.fBool("active", true)
		e.closeObj()
		if ai == 0 {
			e.elem()
			e.openObj()
			e.fStr("key", old)
			e.fBool("active", false)
			e.closeObj()
		}
		e.closeArr()
		if a.allowed != nil {
			e.key("allowedIPs")
			e.openArr()
			for _, ip := range a.allowed {
				e.elem()
				e.str(ip)
			}
			e.closeArr()
		}
		e.closeObj()
	}
	e.closeArr()
	switch ci % 3 {
	case 0:
		e.key("autoRoles")
		e.raw(`["EMPLOYEE"]`)
	case 2:
		e.key("autoRoles")
		e.raw(`["EMPLOYEE","REQUESTER"]`)
	}
	g.flush()

	g.communityLists()
	c.query = strings.ToLower(companyFirst[g.r.IntN(asciiFirstWords)].text[:3])
	c.sample.Query = c.query
	c.modDays = make([]int, int(lastInstant.Sub(firstDay)/(24*time.Hour))+1)

	g.write(`,"suppliers":[`)
	for i := 0; i < nSup && g.err == nil; i++ {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = append(e.b, '\n')
		g.supplier(i)
		g.flush()
	}
	g.write("\n]")

	g.write(`,"users":[`)
	for i := 0; i < nUsers && g.err == nil; i++ {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = append(e.b, '\n')
		u := g.user(i)
		if len(c.sample.Users) < 100 {
			c.sample.Users = append(c.sample.Users, u)
		}
		g.flush()
	}
	g.write("\n]")

	g.write(`,"budgets":[`)
	g.budgets()
	g.write("\n]}")

	g.finishSample(nSup)
	mc.Sample = *c.sample
	g.man.Communities = append(g.man.Communities, mc)
}

// asciiFirstWords is how many entries at the start of companyFirst are
// plain ASCII words; the sample query is drawn from them.
const asciiFirstWords = 54

func communityID(ci int) (id, name string) {
	if ci < len(communityNames) {
		return communityNames[ci].id, communityNames[ci].name
	}
	n := fmt.Sprint(ci + 1)
	return "community-" + n, "Community " + n
}

// communityLists draws the payment terms, buyer groups and tags that the
// community's suppliers share.
func (g *generator) communityLists() {
	c := g.c
	c.terms = []paymentTerm{
		{code: "NET30", active: true, days: 30, termType: "DAYS_AFTER_THE_INVOICE_DATE", description: "Net 30 days from the invoice date", descShape: present},
		{code: "NET7", active: true, days: 7, termType: "DAYS_AFTER_THE_INVOICE_DATE", descShape: explicitNull},
		{code: "EOM20", active: true, days: 20, termType: "OF_THE_FOLLOWING_MONTH", description: "20th of the month following the invoice – «fin de mois»", descShape: present},
		{code: "COM15", active: true, days: 15, termType: "OF_THE_CURRENT_MONTH", descShape: absent},
		{code: "COD", active: true, days: -1, termType: "IMMEDIATELY", description: "Payment on delivery. " + strings.Repeat("Conditions apply; see the supplier agreement. ", 20), descShape: present},
		{code: "NET60-LEGACY", active: false, days: 60, termType: "DAYS_AFTER_THE_INVOICE_DATE", description: "Retired: replaced by NET30 in 2023", descShape: present},
	}
	for i := range c.terms {
		c.terms[i].id = g.uuid()
	}
	c.groups = make([]named, len(buyerGroupNames))
	for i, n := range buyerGroupNames {
		c.groups[i] = named{id: g.uuid(), name: n}
	}
	c.tags = make([]named, len(tagNames))
	for i, n := range tagNames {
		c.tags[i] = named{id: g.uuid(), name: n}
	}
}

// finishSample picks the modifiedSince day: the latest day at or after
// which at least a tenth of the suppliers were modified.
func (g *generator) finishSample(total int) {
	c := g.c
	if total == 0 {
		return
	}
	target := (total + 9) / 10
	n := 0
	for d := len(c.modDays) - 1; d >= 0; d-- {
		n += c.modDays[d]
		if n >= target {
			c.sample.ModifiedSince = firstDay.AddDate(0, 0, d).Format("2006-01-02") + "T00:00:00Z"
			c.sample.ModifiedSinceMatches = n
			return
		}
	}
}

// hasPrefixFold reports whether s starts with the lower-case ASCII prefix q,
// ignoring case.
func hasPrefixFold(s, q string) bool {
	return len(s) >= len(q) && strings.EqualFold(s[:len(q)], q)
}
