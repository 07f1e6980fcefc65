package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// commands is every command, in the order the usage lists them.
var commands = []*command{
	{group: "community", name: "put", args: "ID", need: []string{"region"}, flags: communityFlags, run: communityPut,
		summary: "Create a community, or replace its name, region and auto-roles (its data is kept)."},
	{group: "community", name: "get", args: "ID", flags: outFlags, run: communityGet,
		summary: "Print a community."},
	{group: "community", name: "list", flags: pageFlags(false), run: communityList,
		summary: "List the communities, a page at a time, by id: a table, or the server's JSON with -json."},

	{group: "supplier", name: "put", args: "[FILE|-]", need: []string{"c"}, flags: childFlags(false), run: supplierPut,
		summary: "Create or replace a supplier from a JSON file (standard input when none or -): one supplier as in a data file.\n" +
			"Its id comes from -id or the file. Contacts and remittanceAddresses in the file are put after it, each on its own path."},
	{group: "supplier", name: "delete", args: "ID", need: []string{"c"}, flags: communityFlag, run: supplierDelete,
		summary: "Delete a supplier with its contacts and remittance addresses."},
	{group: "supplier", name: "get", args: "ID", need: []string{"c"}, flags: outCommunityFlags, run: supplierGet,
		summary: "Print a supplier as the supplier API serves it."},
	{group: "supplier", name: "list", need: []string{"c"}, flags: pageFlags(true), run: supplierList,
		summary: "List a community's suppliers, a page at a time, in the supplier API's order: a table, or the server's JSON with -json.\n" +
			"-query, -modified-since and -sort filter and order them as the supplier API's parameters do."},

	{group: "contact", name: "put", args: "[FILE|-]", need: []string{"c", "supplier"}, flags: childFlags(true), run: childPut("contacts"),
		summary: "Create or replace a contact of a supplier from a JSON file (standard input when none or -); its id comes from -id or the file."},
	{group: "contact", name: "delete", args: "ID", need: []string{"c", "supplier"}, flags: supplierFlags, run: childDelete("contacts"),
		summary: "Delete a contact of a supplier."},

	{group: "address", name: "put", args: "[FILE|-]", need: []string{"c", "supplier"}, flags: childFlags(true), run: childPut("remittance-addresses"),
		summary: "Create or replace a remittance address of a supplier from a JSON file (standard input when none or -); its id comes from -id or the file."},
	{group: "address", name: "delete", args: "ID", need: []string{"c", "supplier"}, flags: supplierFlags, run: childDelete("remittance-addresses"),
		summary: "Delete a remittance address of a supplier."},

	{group: "token", name: "issue", need: []string{"c"}, flags: tokenFlags, run: tokenIssue,
		summary: "Issue a bearer token for the supplier API. The secret is printed this once; the server keeps only its hash."},
	{group: "token", name: "list", need: []string{"c"}, flags: listFlags, run: tokenList,
		summary: "List the community's bearer tokens with when each was last used (never a secret)."},
	{group: "token", name: "revoke", args: "ID", need: []string{"c"}, flags: communityFlag, run: tokenRevoke,
		summary: "Revoke a bearer token: it is refused (401) from then on."},

	{group: "account", name: "put", args: "ID", need: []string{"c"}, flags: accountFlags, run: accountPut,
		summary: "Create a service account of the user API, or replace its IP allowlist (its keys are kept)."},
	{group: "account", name: "get", args: "ID", need: []string{"c"}, flags: outCommunityFlags, run: accountGet,
		summary: "Print a service account with its keys and when each was last used (never a secret)."},

	{group: "key", name: "add", args: "ACCOUNT", need: []string{"c"}, flags: outCommunityFlags, run: keyAdd,
		summary: "Add a key to a service account. The secret is printed this once; the server keeps only its hash."},
	{group: "key", name: "list", args: "ACCOUNT", need: []string{"c"}, flags: listFlags, run: keyList,
		summary: "List a service account's keys with when each was last used: an old key whose LAST USED stops moving can go."},
	{group: "key", name: "deactivate", args: "ACCOUNT KEY-ID", need: []string{"c"}, flags: outCommunityFlags, run: keyActive(false),
		summary: "Deactivate a key: it is refused (401) from then on."},
	{group: "key", name: "reactivate", args: "ACCOUNT KEY-ID", need: []string{"c"}, flags: outCommunityFlags, run: keyActive(true),
		summary: "Reactivate a deactivated key."},

	{group: "budget", name: "put", args: "ACCOUNT AMOUNT", need: []string{"c"}, flags: outCommunityFlags, run: budgetPut,
		summary: "Set the budget of an account code (a decimal such as 1250.00), creating the entry when absent."},
	{group: "budget", name: "delete", args: "ACCOUNT", need: []string{"c"}, flags: communityFlag, run: budgetDelete,
		summary: "Remove an account code from the community's budget table."},

	{group: "import", args: "FILE|-", run: importFile,
		summary: "Upsert a data file (docs/datafile.md) of any size, streamed to the server, all or nothing.\n" +
			"A progress bar shows on standard error when it is a terminal; a summary of what was written follows."},
}

// --- flags ---------------------------------------------------------------------

func communityFlag(fs *flag.FlagSet, o *opts) {
	fs.StringVar(&o.community, "c", "", "community `id`")
}

func outFlags(fs *flag.FlagSet, o *opts) {
	fs.StringVar(&o.out, "o", "", "print only the value at `path` of the JSON answer (e.g. id, keys.0.id, content.0.id)")
}

func outCommunityFlags(fs *flag.FlagSet, o *opts) {
	communityFlag(fs, o)
	outFlags(fs, o)
}

func listFlags(fs *flag.FlagSet, o *opts) {
	outCommunityFlags(fs, o)
	fs.BoolVar(&o.json, "json", false, "print the server's JSON answer instead of a table")
}

// pageFlags are the flags of a paged list: -page and -size, and for the
// suppliers of a community -c and the supplier API's filters.
func pageFlags(suppliers bool) func(fs *flag.FlagSet, o *opts) {
	return func(fs *flag.FlagSet, o *opts) {
		outFlags(fs, o)
		fs.BoolVar(&o.json, "json", false, "print the server's JSON answer instead of a table")
		fs.IntVar(&o.page, "page", 0, "the zero-based `number` of the page to show")
		fs.IntVar(&o.size, "size", 20, "`items` per page, 1 to 100")
		if suppliers {
			communityFlag(fs, o)
			fs.StringVar(&o.query, "query", "", "only suppliers whose name, legal business name, a keyword or supplier id starts with this `text` (case and accents ignored)")
			fs.StringVar(&o.modifiedSince, "modified-since", "", "only suppliers modified at or after this `time` (RFC 3339, or a date)")
			fs.StringVar(&o.sort, "sort", "", "`field`[,asc|desc] of name, createdDate, modifiedDate (default name)")
		}
	}
}

func supplierFlags(fs *flag.FlagSet, o *opts) {
	communityFlag(fs, o)
	fs.StringVar(&o.supplier, "supplier", "", "the supplier's `id`")
}

func childFlags(underSupplier bool) func(fs *flag.FlagSet, o *opts) {
	return func(fs *flag.FlagSet, o *opts) {
		outCommunityFlags(fs, o)
		if underSupplier {
			fs.StringVar(&o.supplier, "supplier", "", "the supplier's `id`")
		}
		fs.StringVar(&o.id, "id", "", "the `id` to write (default: the file's \"id\")")
	}
}

func communityFlags(fs *flag.FlagSet, o *opts) {
	outFlags(fs, o)
	fs.StringVar(&o.name, "name", "", "the community's display `name`")
	fs.StringVar(&o.region, "region", "", "its `region`: AU, NZ, US or DEMO")
	fs.StringVar(&o.autoRoles, "auto-roles", "", "comma-separated role `codes` the user API adds to every user it writes")
}

func tokenFlags(fs *flag.FlagSet, o *opts) {
	outCommunityFlags(fs, o)
	fs.StringVar(&o.name, "name", "", "a `name` telling who the token is for")
	fs.StringVar(&o.scopes, "scopes", "suppliers:read", "comma-separated `scopes`")
	fs.StringVar(&o.expires, "expires", "", "when the token stops working: an RFC 3339 `time` or a duration from now (720h)")
}

func accountFlags(fs *flag.FlagSet, o *opts) {
	outCommunityFlags(fs, o)
	fs.StringVar(&o.allow, "allow", "", "comma-separated `CIDRs` or addresses callers must come from (empty: any)")
}

// list splits a comma-separated flag value; empty gives an empty list.
func list(s string) []string {
	out := []string{}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// --- communities ---------------------------------------------------------------

func communityPut(e *env, c *cmdline) error {
	body, _ := json.Marshal(map[string]any{"name": c.o.name, "region": c.o.region, "autoRoles": list(c.o.autoRoles)})
	return e.call(c, http.MethodPut, path("communities", c.args[0]), body)
}

func communityGet(e *env, c *cmdline) error {
	return e.call(c, http.MethodGet, path("communities", c.args[0]), nil)
}

// call sends one request and prints the answer (honouring -o).
func (e *env) call(c *cmdline, method, p string, body []byte) error {
	cl, err := e.newClient(e.timeout)
	if err != nil {
		return err
	}
	answer, err := cl.do(e.ctx, method, p, body)
	if err != nil {
		return err
	}
	return printAnswer(e.stdout, answer, c.o.out)
}

func communityList(e *env, c *cmdline) error {
	return e.list(c, "/communities?"+pageQuery(c).Encode(), printCommunities)
}

// pageQuery is the query of a paged list: page and size, sent as given
// (the server answers a value out of range with a 400 naming it).
func pageQuery(c *cmdline) url.Values {
	return url.Values{"page": {strconv.Itoa(c.o.page)}, "size": {strconv.Itoa(c.o.size)}}
}

// list gets a list and prints it as a table with table, or as JSON with
// -json or -o.
func (e *env) list(c *cmdline, p string, table func(io.Writer, []byte) error) error {
	cl, err := e.newClient(e.timeout)
	if err != nil {
		return err
	}
	answer, err := cl.do(e.ctx, http.MethodGet, p, nil)
	if err != nil {
		return err
	}
	if c.o.json || c.o.out != "" {
		return printAnswer(e.stdout, answer, c.o.out)
	}
	return table(e.stdout, answer)
}

// --- suppliers, contacts, addresses ----------------------------------------------

// bodyID returns the id to write: -id, else the body's "id" (a string).
func bodyID(in *input, m map[string]json.RawMessage, flagID, prefix string) (string, error) {
	var fileID string
	if raw, ok := m["id"]; ok {
		if err := json.Unmarshal(raw, &fileID); err != nil {
			off, _ := locate(in.data, strings.TrimPrefix(prefix+".id", "."))
			return "", in.errorAt(off, "id: must be a string (a UUID)")
		}
	}
	switch {
	case flagID != "" && fileID != "" && flagID != fileID:
		off, _ := locate(in.data, strings.TrimPrefix(prefix+".id", "."))
		return "", in.errorAt(off, fmt.Sprintf("id: %s differs from -id %s", fileID, flagID))
	case flagID != "":
		return flagID, nil
	case fileID != "":
		return fileID, nil
	}
	off, _ := locate(in.data, prefix)
	return "", in.errorAt(off, "id: give the id in the file or with -id")
}

func supplierPut(e *env, c *cmdline) error {
	in, err := readInput(e, argOr(c.args, 0))
	if err != nil {
		return err
	}
	m, err := in.object()
	if err != nil {
		return err
	}
	id, err := bodyID(in, m, c.o.id, "")
	if err != nil {
		return err
	}
	// A supplier as in a data file may carry its contacts and addresses:
	// they go on their own paths once the supplier exists.
	children := map[string][]json.RawMessage{}
	for _, kind := range []string{"contacts", "remittanceAddresses"} {
		raw, ok := m[kind]
		if !ok {
			continue
		}
		delete(m, kind)
		if string(raw) == "null" {
			continue
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			off, _ := locate(in.data, kind)
			return in.errorAt(off, kind+": must be an array")
		}
		children[kind] = items
	}
	body := in.data
	if len(children) > 0 {
		if body, err = json.Marshal(m); err != nil {
			return err
		}
	}
	cl, err := e.newClient(e.timeout)
	if err != nil {
		return err
	}
	base := path("communities", c.o.community, "suppliers", id)
	answer, err := cl.do(e.ctx, http.MethodPut, base, body)
	if err != nil {
		return in.refused(err, "")
	}
	for _, kind := range []string{"contacts", "remittanceAddresses"} {
		route := map[string]string{"contacts": "contacts", "remittanceAddresses": "remittance-addresses"}[kind]
		for i, item := range children[kind] {
			prefix := fmt.Sprintf("%s[%d]", kind, i)
			var cm map[string]json.RawMessage
			if err := json.Unmarshal(item, &cm); err != nil {
				off, _ := locate(in.data, prefix)
				return in.errorAt(off, prefix+": must be an object")
			}
			cid, err := bodyID(in, cm, "", prefix)
			if err != nil {
				return err
			}
			if _, err := cl.do(e.ctx, http.MethodPut, base+path(route, cid), item); err != nil {
				return in.refused(err, prefix)
			}
		}
		if n := len(children[kind]); n > 0 {
			what := map[string]string{"contacts": "contacts", "remittanceAddresses": "remittance addresses"}[kind]
			fmt.Fprintf(e.stderr, "put %d %s of supplier %s\n", n, what, id)
		}
	}
	return printAnswer(e.stdout, answer, c.o.out)
}

func argOr(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}

func supplierGet(e *env, c *cmdline) error {
	return e.call(c, http.MethodGet, path("communities", c.o.community, "suppliers", c.args[0]), nil)
}

func supplierList(e *env, c *cmdline) error {
	q := pageQuery(c)
	for k, v := range map[string]string{"query": c.o.query, "modifiedSince": c.o.modifiedSince, "sort": c.o.sort} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return e.list(c, path("communities", c.o.community, "suppliers")+"?"+q.Encode(), printSuppliers)
}

func supplierDelete(e *env, c *cmdline) error {
	return e.remove(path("communities", c.o.community, "suppliers", c.args[0]),
		fmt.Sprintf("deleted supplier %s of %s, with its contacts and remittance addresses", c.args[0], c.o.community))
}

// remove sends a DELETE and says what went.
func (e *env) remove(p, done string) error {
	cl, err := e.newClient(e.timeout)
	if err != nil {
		return err
	}
	if _, err := cl.do(e.ctx, http.MethodDelete, p, nil); err != nil {
		return err
	}
	_, err = fmt.Fprintln(e.stdout, done)
	return err
}

// childPut puts a contact or a remittance address (route is the path
// segment under the supplier).
func childPut(route string) func(e *env, c *cmdline) error {
	return func(e *env, c *cmdline) error {
		in, err := readInput(e, argOr(c.args, 0))
		if err != nil {
			return err
		}
		m, err := in.object()
		if err != nil {
			return err
		}
		id, err := bodyID(in, m, c.o.id, "")
		if err != nil {
			return err
		}
		cl, err := e.newClient(e.timeout)
		if err != nil {
			return err
		}
		answer, err := cl.do(e.ctx, http.MethodPut, path("communities", c.o.community, "suppliers", c.o.supplier, route, id), in.data)
		if err != nil {
			return in.refused(err, "")
		}
		return printAnswer(e.stdout, answer, c.o.out)
	}
}

func childDelete(route string) func(e *env, c *cmdline) error {
	what := map[string]string{"contacts": "contact", "remittance-addresses": "remittance address"}[route]
	return func(e *env, c *cmdline) error {
		return e.remove(path("communities", c.o.community, "suppliers", c.o.supplier, route, c.args[0]),
			fmt.Sprintf("deleted %s %s of supplier %s", what, c.args[0], c.o.supplier))
	}
}

// --- tokens ----------------------------------------------------------------------

// expiry reads -expires: an RFC 3339 time, or a duration from now.
func expiry(s string, now time.Time) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return &t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return nil, fmt.Errorf("-expires %q: want an RFC 3339 time (2027-01-31T00:00:00Z) or a positive duration (720h)", s)
	}
	t := now.Add(d).UTC().Truncate(time.Second)
	return &t, nil
}

func tokenIssue(e *env, c *cmdline) error {
	exp, err := expiry(c.o.expires, time.Now())
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"name": c.o.name, "scopes": list(c.o.scopes), "expires": exp})
	if err := e.call(c, http.MethodPost, path("communities", c.o.community, "tokens"), body); err != nil {
		return err
	}
	fmt.Fprintln(e.stderr, "The token is shown this once: the server keeps only its hash. Store it now.")
	return nil
}

func tokenList(e *env, c *cmdline) error {
	cl, err := e.newClient(e.timeout)
	if err != nil {
		return err
	}
	answer, err := cl.do(e.ctx, http.MethodGet, path("communities", c.o.community, "tokens"), nil)
	if err != nil {
		return err
	}
	if c.o.json || c.o.out != "" {
		return printAnswer(e.stdout, answer, c.o.out)
	}
	return printTokens(e.stdout, answer, time.Now())
}

func tokenRevoke(e *env, c *cmdline) error {
	return e.remove(path("communities", c.o.community, "tokens", c.args[0]),
		fmt.Sprintf("revoked token %s of %s", c.args[0], c.o.community))
}

// --- service accounts and keys --------------------------------------------------------

func accountPut(e *env, c *cmdline) error {
	body, _ := json.Marshal(map[string]any{"allowedIPs": list(c.o.allow)})
	return e.call(c, http.MethodPut, path("communities", c.o.community, "service-accounts", c.args[0]), body)
}

func accountGet(e *env, c *cmdline) error {
	return e.call(c, http.MethodGet, path("communities", c.o.community, "service-accounts", c.args[0]), nil)
}

func keyAdd(e *env, c *cmdline) error {
	if err := e.call(c, http.MethodPost, path("communities", c.o.community, "service-accounts", c.args[0], "keys"), nil); err != nil {
		return err
	}
	fmt.Fprintln(e.stderr, "The key is shown this once: the server keeps only its hash. Store it now.")
	return nil
}

func keyList(e *env, c *cmdline) error {
	cl, err := e.newClient(e.timeout)
	if err != nil {
		return err
	}
	answer, err := cl.do(e.ctx, http.MethodGet, path("communities", c.o.community, "service-accounts", c.args[0]), nil)
	if err != nil {
		return err
	}
	if c.o.json || c.o.out != "" {
		return printAnswer(e.stdout, answer, c.o.out)
	}
	return printKeys(e.stdout, answer)
}

func keyActive(active bool) func(e *env, c *cmdline) error {
	return func(e *env, c *cmdline) error {
		body, _ := json.Marshal(map[string]bool{"active": active})
		return e.call(c, http.MethodPatch, path("communities", c.o.community, "service-accounts", c.args[0], "keys", c.args[1]), body)
	}
}

// --- budgets -------------------------------------------------------------------------

func budgetPut(e *env, c *cmdline) error {
	// Sent as a JSON string: the decimal arrives exactly as typed.
	body, _ := json.Marshal(map[string]string{"budget": c.args[1]})
	return e.call(c, http.MethodPut, path("communities", c.o.community, "budgets", c.args[0]), body)
}

func budgetDelete(e *env, c *cmdline) error {
	return e.remove(path("communities", c.o.community, "budgets", c.args[0]),
		fmt.Sprintf("deleted the budget of account %s of %s", c.args[0], c.o.community))
}

// --- import ---------------------------------------------------------------------------

// importFile streams a data file to POST /admin/v1/import: the file is
// never read whole into memory, here or (for stores that stream) on the
// server. Each request's -timeout does not apply: a large file takes as
// long as it takes; ^C cancels.
func importFile(e *env, c *cmdline) error {
	name, size := c.args[0], int64(-1)
	var r io.Reader
	if name == "-" {
		name, r = "stdin", e.stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			size = fi.Size()
		}
		r = f
	}
	cl, err := e.newClient(0)
	if err != nil {
		return err
	}
	var bar io.Writer
	if isTerminal(e.stderr) {
		bar = e.stderr
	}
	p := newProgress(r, size, bar)
	answer, err := cl.send(e.ctx, http.MethodPost, "/import", p, size)
	sent, took := p.finish()
	if err != nil {
		return fmt.Errorf("import %s: %w", name, err)
	}
	return printImport(e.stdout, answer, fmt.Sprintf("imported %s (%s in %s)", name, formatBytes(sent), took.Round(time.Millisecond)))
}

// printImport writes the answer of an import, after head: what the
// import did (created, updated, unchanged) over all kinds, then a table
// of it by kind. The answer of a server that does not tell outcomes apart
// (no "changes") is the counts by kind, on one line.
func printImport(w io.Writer, answer []byte, head string) error {
	var a struct {
		Changes map[string]outcome `json:"changes"`
	}
	var counts map[string]json.RawMessage
	if err := json.Unmarshal(answer, &counts); err != nil {
		return fmt.Errorf("the server's answer is not an import summary: %w", err)
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		return fmt.Errorf("the server's answer is not an import summary: %w", err)
	}
	if a.Changes == nil {
		totals := map[string]int{}
		for k, raw := range counts {
			var n int
			if err := json.Unmarshal(raw, &n); err != nil {
				return fmt.Errorf("the server's answer is not an import summary: %s: %w", k, err)
			}
			totals[k] = n
		}
		_, err := fmt.Fprintf(w, "%s: %s\n", head, summary(totals))
		return err
	}
	var sum outcome
	kinds := make([]string, 0, len(a.Changes))
	for k, o := range a.Changes {
		sum.Created += o.Created
		sum.Updated += o.Updated
		sum.Unchanged += o.Unchanged
		if o.Created+o.Updated+o.Unchanged > 0 {
			kinds = append(kinds, k)
		}
	}
	line := fmt.Sprintf("%s: %d created, %d updated, %d unchanged", head, sum.Created, sum.Updated, sum.Unchanged)
	if sum.Created+sum.Updated == 0 {
		line += " - nothing changed"
	}
	fmt.Fprintln(w, line)
	if len(kinds) == 0 {
		return nil
	}
	slices.SortFunc(kinds, byKind)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tCREATED\tUPDATED\tUNCHANGED")
	for _, k := range kinds {
		o := a.Changes[k]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", k, o.Created, o.Updated, o.Unchanged)
	}
	return tw.Flush()
}

// outcome is what an import did with the entities of one kind.
type outcome struct {
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
}

// byKind orders kinds of entity: communities first, then the others by
// name.
func byKind(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == "communities":
		return -1
	case b == "communities":
		return 1
	}
	return strings.Compare(a, b)
}

// summary lists counts as "communities 1, suppliers 1000, ...":
// communities first, then the other kinds by name.
func summary(counts map[string]int) string {
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, byKind)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, counts[k])
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}
