// Command procurectl operates a running procure server through its admin
// API (docs: admin.md): communities, suppliers with their contacts and
// remittance addresses, bearer tokens, service accounts and their keys,
// budgets, and the bulk import of a data file.
//
//	export PROCURE_ADMIN_URL=http://127.0.0.1:8081     # examples/server -admin-addr
//	export PROCURE_ADMIN_TOKEN=...                     # the server's admin token
//	procurectl community put -name "Acme" -region AU acme-au
//	procurectl supplier put -c acme-au supplier.json
//	procurectl token issue -c acme-au -name erp -scopes suppliers:read
//	procurectl key add -c acme-au erp
//	procurectl import big.json
//
// Commands (each takes -h, and a group lists its own: procurectl supplier -h):
//
//	community put [-name N] -region R [-auto-roles A,B] ID
//	community get ID
//	community list [-page N] [-size N]       the communities, by id
//	supplier put -c C [-id ID] [FILE|-]      a supplier as in a data file; its contacts and
//	                                         remittanceAddresses, when given, are put after it
//	supplier delete -c C ID
//	supplier get -c C ID                     the supplier as the supplier API serves it
//	supplier list -c C [-query Q] [-modified-since T] [-sort S] [-page N] [-size N]
//	contact put -c C -supplier SID [-id ID] [FILE|-]
//	contact delete -c C -supplier SID ID
//	address put -c C -supplier SID [-id ID] [FILE|-]
//	address delete -c C -supplier SID ID
//	token issue -c C [-name N] [-scopes S,...] [-expires TIME|DURATION]
//	token list -c C
//	token revoke -c C ID
//	account put -c C [-allow CIDR,...] ID    create a service account or replace its allowlist
//	account get -c C ID                      the account with its keys and their last use
//	key add -c C ACCOUNT                     a new key; the secret is shown once
//	key list -c C ACCOUNT                    the account's keys with their last use
//	key deactivate -c C ACCOUNT KEY-ID
//	key reactivate -c C ACCOUNT KEY-ID
//	budget put -c C ACCOUNT AMOUNT
//	budget delete -c C ACCOUNT
//	import FILE|-                            stream a data file (upsert), with a progress bar
//
// Global flags, before the command: -server URL (default
// $PROCURE_ADMIN_URL, else http://127.0.0.1:8081; the /admin/v1 prefix is
// added when missing) and -timeout D (each request but the import's).
// Commands that print a JSON answer take -o PATH to print one value of it
// instead (e.g. -o token, -o keys.0.id), for shell scripts; lists print a
// table unless -json is given.
//
// import sends the file as it reads it: neither procurectl nor a server on
// PostgreSQL holds it whole. Measured on a shared 2-core machine (load
// about 12, both processes niced): a 1,000,000-supplier file from
// examples/gendata (2.7 GiB, 1.6 million contacts, 1.1 million addresses)
// into examples/server -postgres took 17m52s, with a peak resident memory
// of 7.9 MB for procurectl and 103 MB for the server.
//
// The admin token is read only from the environment variable
// PROCURE_ADMIN_TOKEN, never from a flag: flags show up in process lists
// and shell history. procurectl never prints it.
//
// Errors name what is wrong: bad input by file, line and column
// ("supplier.json:12:5: ..."), including a field the server refused, which
// is located in the file; a server error by its status, code and message.
// Exit status: 0 on success, 1 on failure, 2 for a usage error.
//
// The name follows the "<service>ctl" habit (kubectl, etcdctl,
// systemctl) for the command that controls a running service, as opposed
// to the service itself (examples/server): an operator looking for "the
// thing that talks to the admin API" finds it by that suffix, and it cannot
// be mistaken for a library package.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Environment variables read by procurectl.
const (
	envToken = "PROCURE_ADMIN_TOKEN"
	envURL   = "PROCURE_ADMIN_URL"
)

// defaultServer is the admin listener the README's walkthrough starts.
const defaultServer = "http://127.0.0.1:8081"

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// errUsage marks a command line the flag parser rejected; the message and
// the usage are printed already.
var errUsage = errors.New("usage")

// env is one run's surroundings: tests run the command in-process with
// their own.
type env struct {
	ctx    context.Context
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	server string
	// timeout bounds each request but the import's.
	timeout time.Duration
}

// command is one subcommand: "supplier put" is {group: "supplier", name: "put"}.
type command struct {
	group, name string
	args        string   // the positional arguments, for the usage line: [X] is optional
	need        []string // flags that must be given
	summary     string
	run         func(e *env, c *cmdline) error
	// flags declares the command's own flags on fs.
	flags func(fs *flag.FlagSet, o *opts)
}

// run is the whole program: it parses args, runs the command and returns
// the exit status. Tests call it directly.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{ctx: ctx, getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	fs := flag.NewFlagSet("procurectl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := getenv(envURL)
	if server == "" {
		server = defaultServer
	}
	fs.StringVar(&e.server, "server", server, "admin API `URL` (the default is $"+envURL+" when set)")
	fs.DurationVar(&e.timeout, "timeout", 30*time.Second, "timeout of each request but the import's")
	fs.Usage = func() { mainUsage(fs) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprintln(stderr, "procurectl: a command is required")
		mainUsage(fs)
		return exitUsage
	}
	if len(rest) >= 2 && isHelp(rest[1]) && groupUsage(stderr, rest[0]) {
		return exitOK // procurectl supplier -h
	}
	cmd, rest, err := findCommand(rest)
	if err != nil {
		fmt.Fprintln(stderr, "procurectl:", err)
		mainUsage(fs)
		return exitUsage
	}
	c, err := parseCommand(cmd, rest, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		return exitUsage
	}
	if err := cmd.run(e, c); err != nil {
		if errors.Is(err, errUsage) {
			return exitUsage
		}
		fmt.Fprintln(stderr, "procurectl:", err)
		return exitFailure
	}
	return exitOK
}

// findCommand picks the command named by the first one or two words.
func findCommand(args []string) (*command, []string, error) {
	var group []*command
	for _, c := range commands {
		if c.group == args[0] {
			group = append(group, c)
		}
	}
	if len(group) == 0 {
		return nil, nil, fmt.Errorf("unknown command %q", args[0])
	}
	if len(group) == 1 && group[0].name == "" {
		return group[0], args[1:], nil
	}
	var names []string
	for _, c := range group {
		names = append(names, c.name)
	}
	if len(args) < 2 {
		return nil, nil, fmt.Errorf("%s: a subcommand is required: %s", args[0], strings.Join(names, ", "))
	}
	for _, c := range group {
		if c.name == args[1] {
			return c, args[2:], nil
		}
	}
	return nil, nil, fmt.Errorf("%s: unknown subcommand %q (want %s)", args[0], args[1], strings.Join(names, ", "))
}

// isHelp reports whether arg asks for help, as the flag package reads it.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--h", "--help":
		return true
	}
	return false
}

// groupUsage prints the usage of a group of subcommands ("procurectl
// supplier -h") and reports whether group is one; a command of its own
// ("import") prints its usage itself.
func groupUsage(w io.Writer, group string) bool {
	var cmds []*command
	for _, c := range commands {
		if c.group == group && c.name != "" {
			cmds = append(cmds, c)
		}
	}
	if len(cmds) == 0 {
		return false
	}
	fmt.Fprintf(w, "usage: procurectl %s SUBCOMMAND [flags] [args]\n\nSubcommands:\n", group)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range cmds {
		first, _, _ := strings.Cut(c.summary, "\n")
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, first)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nRun procurectl %s SUBCOMMAND -h for a subcommand's flags.\n", group)
	return true
}

// opts are every command's flags; each command declares the ones it
// reads.
type opts struct {
	community, supplier, id string
	name, region, autoRoles string
	scopes, expires         string
	allow                   string
	out                     string
	json                    bool
	page, size              int
	query, modifiedSince    string
	sort                    string
}

// cmdline is a parsed command line: the flags and the positional
// arguments, checked against the command's count.
type cmdline struct {
	cmd  *command
	o    opts
	args []string
}

// parseCommand parses the command's flags, which may come before, between
// or after its positional arguments.
func parseCommand(cmd *command, args []string, stderr io.Writer) (*cmdline, error) {
	c := &cmdline{cmd: cmd}
	fs := flag.NewFlagSet(cmd.title(), flag.ContinueOnError)
	fs.SetOutput(stderr)
	if cmd.flags != nil {
		cmd.flags(fs, &c.o)
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: procurectl %s %s\n\n%s\n", cmd.title(), cmd.synopsis(), cmd.summary)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(stderr)
			fs.PrintDefaults()
		}
	}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		c.args = append(c.args, args[0])
		args = args[1:]
	}
	min, max := cmd.arity()
	if len(c.args) < min || len(c.args) > max {
		want := fmt.Sprintf("%d", min)
		switch {
		case max > min:
			want = fmt.Sprintf("%d or %d", min, max)
		case min == 0:
			want = "no"
		}
		fmt.Fprintf(stderr, "procurectl %s: want %s arguments (%s), got %d\n", cmd.title(), want, cmd.args, len(c.args))
		fs.Usage()
		return nil, errUsage
	}
	for _, req := range cmd.need {
		if f := fs.Lookup(req); f != nil && f.Value.String() == "" {
			fmt.Fprintf(stderr, "procurectl %s: -%s is required\n", cmd.title(), req)
			fs.Usage()
			return nil, errUsage
		}
	}
	return c, nil
}

func (c *command) title() string {
	if c.name == "" {
		return c.group
	}
	return c.group + " " + c.name
}

// arity counts the positional arguments of c.args: one in brackets is
// optional.
func (c *command) arity() (min, max int) {
	for _, w := range strings.Fields(c.args) {
		if !strings.HasPrefix(w, "[") {
			min++
		}
		max++
	}
	return min, max
}

// synopsis is the usage line after the command's name: required flags,
// then [flags] when it has others, then the arguments.
func (c *command) synopsis() string {
	var b strings.Builder
	for _, f := range c.need {
		b.WriteString("-" + f + " " + metavar(f) + " ")
	}
	b.WriteString("[flags]")
	if c.args != "" {
		b.WriteString(" " + c.args)
	}
	return b.String()
}

// metavar names a required flag's value in usage lines.
func metavar(flag string) string {
	switch flag {
	case "c":
		return "COMMUNITY"
	case "supplier":
		return "SUPPLIER-ID"
	}
	return strings.ToUpper(flag)
}

func mainUsage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprintf(w, "usage: procurectl [-server URL] [-timeout D] COMMAND [flags] [args]\n\n")
	fmt.Fprintf(w, "The admin token is read from $%s.\n\nCommands:\n", envToken)
	byTitle := make([]*command, len(commands))
	copy(byTitle, commands)
	sort.SliceStable(byTitle, func(i, j int) bool { return byTitle[i].group < byTitle[j].group })
	for _, c := range byTitle {
		first, _, _ := strings.Cut(c.summary, "\n")
		fmt.Fprintf(w, "  %-18s %s\n", c.title(), first)
	}
	fmt.Fprintf(w, "\nRun procurectl COMMAND -h for a command's flags.\n\nGlobal flags:\n")
	fs.PrintDefaults()
}
