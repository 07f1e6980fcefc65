// Command connector is the customer-side connector of account code
// validation (Interface C): it answers the platform's XML requests at
// POST /account-code-validation from a budget table or a stored procedure
// (docs: datafile.md, last bullet).
//
//	go run ./examples/connector -table budgets.csv
//	go run ./examples/connector -table budgets.csv -over-budget warning
//	go run ./examples/connector -postgres "$DSN" -call "SELECT check_budget(\$1, \$2, \$3, \$4)"
//	go run ./examples/connector -postgres "$DSN" -table-query "SELECT account, budget FROM budgets" -refresh 1m
//
// Budget sources, exactly one of:
//
//   - -table FILE.csv: a CSV budget table with the header account,budget
//     (other columns are ignored), one row per account. It is re-read every
//     -refresh (a broken file is logged and the last good table kept).
//   - -postgres DSN -table-query SQL: a budget table read from PostgreSQL
//     by a query returning (account, budget) rows, re-read every -refresh.
//   - -postgres DSN -call SQL: the stored-procedure option. The SQL
//     receives the values named by -call-params as $1, $2, ... (by default
//     lines, username, organisation_unit, finance_year: the lines as JSON
//     text [{"line_number":1,"account":"6100-200","amount":125.50}], then
//     the optional values or NULL) and returns one JSON text
//     [{"line_number":1,"status":"Valid","message":""}].
//
// With a table, a sum of lines over an account's budget is Invalid, or
// Warning with -over-budget warning; an account absent from the table is
// Invalid. The table may carry the optional columns warn_percent,
// tolerance_percent and as_of (docs: account-codes.md "Tolerance").
//
// Holds (docs: account-codes.md "Holds"): with a table, a check with a
// RequisitionId that has no Invalid line holds its amounts, and other
// requisitions see only what is left; AccountCodeReleaseRequest and
// AccountCodeConfirmRequest end holds or make them commitments, and
// -hold-for (72h by default) bounds a hold's life. Holds live in the
// connector's memory (a restart forgets them: the connector says so at
// start) unless -holds-postgres DSN keeps them in PostgreSQL, shared by
// every connector given the same DSN. GET /account-code-validation/holds
// ?account=X lists an account's holds and commitments (same
// authentication). -show-available puts what is available in the
// messages. -audit FILE appends every check, release, confirm and expiry
// to FILE as JSON lines (reopened on SIGHUP, for log rotation); with
// -holds-postgres they also go to the audit table beside the holds.
//
// Currency (docs: account-codes.md "Splits and currency"): a request
// without a Currency element is in -currency (NZD by default); its amounts
// must be whole numbers of that currency's minor units, and split lines
// are allocated in them.
//
// Callers (docs: account-codes.md "Connector callers"): every request must
// carry "Authorization: Bearer <secret>", the secret taken from the
// environment variable PROCURE_CONNECTOR_TOKEN (compared in constant
// time, never printed or logged); -allow CIDR,... restricts the callers'
// addresses as well. Anything else is a 401 with the XML error body. The
// connector refuses to start without the secret unless -insecure-no-auth
// is given (for local trials: an open connector tells anyone whether an
// account has budget for an amount). -max-body bounds a request body.
//
// Everything is checked before the connector listens: a missing or bad
// CSV file (the error names the file and line), an unreachable database,
// a table query that fails or returns bad rows, conflicting or missing
// flags. Such a configuration error exits with status 2; a failure to
// listen or serve exits with status 1. The connector prints the address it
// serves and shuts down gracefully on SIGINT or SIGTERM.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/budget/pgholds"
	"github.com/procurekit/procure/httpapi"
)

// TokenEnv names the environment variable holding the connector's secret.
const TokenEnv = "PROCURE_CONNECTOR_TOKEN"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode reports err (if it has not been reported already) and returns
// the exit status: 0, 2 for a configuration error, 1 for anything else.
func exitCode(err error, stderr io.Writer) int {
	var ce *configError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2 // flag already printed the problem and the usage
	case errors.As(err, &ce):
		fmt.Fprintln(stderr, "connector:", err)
		return 2
	default:
		fmt.Fprintln(stderr, "connector:", err)
		return 1
	}
}

// errUsage marks a command line that flag parsing rejected (already
// reported on stderr).
var errUsage = errors.New("usage")

// configError is a configuration that cannot work: exit status 2.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

func configErrorf(format string, args ...any) error {
	return &configError{fmt.Errorf(format, args...)}
}

// config is the command line.
type config struct {
	addr       string
	table      string
	overBudget string
	postgres   string
	call       string
	callParams string
	tableQuery string
	refresh    time.Duration
	timeout    time.Duration
	allowText  string
	allow      []netip.Prefix
	noAuth     bool
	maxBody    int64
	holdsPG    string
	holdFor    time.Duration
	showAvail  bool
	audit      string
	currency   string
	set        map[string]bool // flags given on the command line
}

const (
	defaultAddr       = "127.0.0.1:8090"
	defaultCallParams = "lines,username,organisation_unit,finance_year"
	connectTimeout    = 10 * time.Second
	shutdownTimeout   = 10 * time.Second
)

func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{set: map[string]bool{}}
	fs := flag.NewFlagSet("connector", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.addr, "addr", defaultAddr, "listen `address` (host:port)")
	fs.StringVar(&cfg.table, "table", "", "budget table CSV `file` (header account,budget)")
	fs.StringVar(&cfg.overBudget, "over-budget", "invalid", "status of lines whose account's sum is over budget: invalid or warning (table options only)")
	fs.StringVar(&cfg.postgres, "postgres", "", "PostgreSQL `DSN` of the customer database (with -call or -table-query)")
	fs.StringVar(&cfg.call, "call", "", "`SQL` calling the stored procedure, e.g. \"SELECT check_budget($1, $2, $3, $4)\"")
	fs.StringVar(&cfg.callParams, "call-params", defaultCallParams, "the `values` passed to -call as $1, $2, ...: lines, username, organisation_unit, finance_year, requisition_id, currency")
	fs.StringVar(&cfg.tableQuery, "table-query", "", "`SQL` returning the budget table's (account, budget) rows")
	fs.DurationVar(&cfg.refresh, "refresh", 5*time.Minute, "re-read the budget table at this `interval` (0: never)")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "bound on each stored-procedure call (0: none)")
	fs.StringVar(&cfg.allowText, "allow", "", "comma-separated `CIDRs` (or addresses) callers must come from (default: any address)")
	fs.BoolVar(&cfg.noAuth, "insecure-no-auth", false, "serve without the "+TokenEnv+" secret (local trials only)")
	fs.Int64Var(&cfg.maxBody, "max-body", httpapi.DefaultAccountCodeMaxBody, "largest request body in `bytes` (larger: 413)")
	fs.StringVar(&cfg.holdsPG, "holds-postgres", "", "PostgreSQL `DSN` keeping the holds, shared by every connector given it (default: in memory, forgotten on restart)")
	fs.DurationVar(&cfg.holdFor, "hold-for", budget.DefaultHoldFor, "how long a hold lasts unless released or confirmed (table options only)")
	fs.BoolVar(&cfg.showAvail, "show-available", false, "state what is available on an account in the messages (table options only)")
	fs.StringVar(&cfg.currency, "currency", budget.DefaultCurrency, "ISO 4217 `code` of a request that names no Currency; amounts are checked against its minor units and splits allocated in them")
	fs.StringVar(&cfg.audit, "audit", "", "append every check, release, confirm and expiry to this `file` as JSON lines (reopened on SIGHUP)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s=<secret> connector [-addr host:port] [-allow CIDR,...] (-table FILE.csv [-over-budget warning] | -postgres DSN (-call SQL | -table-query SQL)) [-refresh interval]\n\n", TokenEnv)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "connector: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return cfg, errUsage
	}
	fs.Visit(func(f *flag.Flag) { cfg.set[f.Name] = true })
	return cfg, cfg.check()
}

// check rejects flag combinations that cannot work.
func (c *config) check() error {
	switch {
	case c.table == "" && c.postgres == "":
		return configErrorf("no budget source: give -table FILE.csv, or -postgres DSN with -call or -table-query")
	case c.table != "" && c.postgres != "":
		return configErrorf("-table and -postgres exclude each other: choose one budget source")
	case c.postgres != "" && c.call == "" && c.tableQuery == "":
		return configErrorf("-postgres needs -call (stored procedure) or -table-query (budget table)")
	case c.call != "" && c.tableQuery != "":
		return configErrorf("-call and -table-query exclude each other: choose one")
	case (c.call != "" || c.tableQuery != "") && c.postgres == "":
		return configErrorf("-call and -table-query need -postgres DSN")
	case c.call != "" && c.set["over-budget"]:
		return configErrorf("-over-budget applies to the budget table options, not to -call (the procedure decides)")
	case c.call != "" && c.set["refresh"]:
		return configErrorf("-refresh applies to the budget table options, not to -call")
	case c.call == "" && c.set["call-params"]:
		return configErrorf("-call-params applies only with -call")
	case c.call != "" && (c.holdsPG != "" || c.set["hold-for"] || c.showAvail):
		return configErrorf("-holds-postgres, -hold-for and -show-available apply to the budget table options, not to -call (the procedure decides)")
	case c.holdFor <= 0:
		return configErrorf("-hold-for must be positive (got %s)", c.holdFor)
	case c.refresh < 0:
		return configErrorf("-refresh must not be negative")
	case c.timeout < 0:
		return configErrorf("-timeout must not be negative")
	case c.maxBody <= 0:
		return configErrorf("-max-body must be positive (got %d)", c.maxBody)
	}
	allow, err := auth.ParseAllowlist("-allow", c.allowText)
	if err != nil {
		return configErrorf("%w", err)
	}
	c.allow = allow
	if _, err := overBudgetStatus(c.overBudget); err != nil {
		return err
	}
	if _, ok := budget.MinorUnits(c.currency); !ok {
		return configErrorf("-currency must be an active ISO 4217 currency code such as NZD, in capitals (got %q)", c.currency)
	}
	return nil
}

func overBudgetStatus(s string) (budget.Status, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "invalid":
		return budget.Invalid, nil
	case "warning":
		return budget.Warning, nil
	}
	return "", configErrorf("-over-budget must be invalid or warning (got %q)", s)
}

// run is the whole program: it checks the configuration, serves until ctx
// is done, then shuts down gracefully. Tests call it directly.
// maxHeaderBytes bounds the request line and headers of a request
// (docs: limits.md): a caller sends a few short headers. net/http
// allows 4 KiB over it before answering 431.
const maxHeaderBytes = 16 << 10

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	token := os.Getenv(TokenEnv)
	switch {
	case token == "" && !cfg.noAuth:
		return configErrorf("no secret: set %s (callers send it as Authorization: Bearer <secret>), or give -insecure-no-auth for a local trial", TokenEnv)
	case token != "" && cfg.noAuth:
		return configErrorf("-insecure-no-auth and %s exclude each other: unset one", TokenEnv)
	case token != "" && len(token) < 16:
		return configErrorf("%s is %d bytes long; use at least 16 (e.g. openssl rand -hex 32)", TokenEnv, len(token))
	}

	hs, err := openHolds(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer hs.close()
	v, describe, closeSource, err := openSource(ctx, cfg, log, hs)
	if err != nil {
		return err
	}
	defer closeSource()

	mux := http.NewServeMux()
	h := httpapi.NewAccountCodeHandler(v, httpapi.AccountCodeHandlerOptions{
		Logger: log, Token: token, InsecureNoAuth: cfg.noAuth, AllowedIPs: cfg.allow, MaxBodyBytes: cfg.maxBody,
		Currency: cfg.currency,
	})
	h.Mount(mux)
	mux.Handle(httpapi.AccountCodeHoldsPath, h.HoldsHandler())

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return listenError(cfg.addr, err)
	}
	srv := &http.Server{
		Handler:           httpapi.RequestLog(log, mux), // request id, route, status, duration_ms (docs: operations.md "Logs")
		ReadHeaderTimeout: 5 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	fmt.Fprintf(stdout, "connector serving POST http://%s%s\n", ln.Addr(), httpapi.AccountCodePath)
	fmt.Fprintf(stdout, "  budget source: %s\n", describe)
	if cfg.call == "" {
		fmt.Fprintf(stdout, "  holds: %s; each lasts %s unless released or confirmed\n", hs.describe, cfg.holdFor)
	}
	if hs.auditDescribe != "" {
		fmt.Fprintf(stdout, "  audit: %s\n", hs.auditDescribe)
	}
	switch {
	case cfg.noAuth:
		fmt.Fprintf(stdout, "  callers: NOT AUTHENTICATED (-insecure-no-auth); allowlist: %s\n", allowDescription(cfg.allow))
	default:
		fmt.Fprintf(stdout, "  callers: Authorization: Bearer <%s>; allowlist: %s\n", TokenEnv, allowDescription(cfg.allow))
	}
	return serve(ctx, srv, ln, log)
}

// openSource builds the validator of the configured budget source, checking
// that it works. describe is a line for the operator (no secrets).
func openSource(ctx context.Context, cfg config, log *slog.Logger, hs *holdsSetup) (v budget.Validator, describe string, closeFn func(), err error) {
	over, err := overBudgetStatus(cfg.overBudget)
	if err != nil {
		return nil, "", nil, err
	}
	tableConfig := func(load budget.TableLoader) budget.TableConfig {
		return budget.TableConfig{
			Load: load, Refresh: cfg.refresh, OverBudget: over, Logger: log,
			Holds: hs.store, HoldFor: cfg.holdFor, ShowAvailable: cfg.showAvail, Audit: hs.audit,
		}
	}
	if cfg.table != "" {
		tv, err := budget.NewTableValidator(ctx, tableConfig(budget.CSVFile(cfg.table)))
		if err != nil {
			return nil, "", nil, &configError{err}
		}
		return tv, fmt.Sprintf("budget table %s (%d accounts, over budget: %s, refresh: %s)",
			cfg.table, tv.Table().Len(), strings.ToLower(string(over)), every(cfg.refresh)), func() { tv.Close() }, nil
	}

	db, err := sql.Open("pgx", cfg.postgres)
	if err != nil {
		// pgx's parse errors never repeat the password; the DSN itself is
		// not printed.
		return nil, "", nil, configErrorf("-postgres: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, connectTimeout)
	err = db.PingContext(pctx)
	cancel()
	if err != nil {
		db.Close()
		return nil, "", nil, configErrorf("-postgres: cannot connect to the database: %w", err)
	}

	if cfg.call != "" {
		params, err := budget.ParseProcedureParams(cfg.callParams)
		if err != nil {
			db.Close()
			return nil, "", nil, configErrorf("-call-params: %w", err)
		}
		pv, err := budget.NewProcedureValidator(budget.ProcedureConfig{DB: db, Query: cfg.call, Params: params, Timeout: cfg.timeout})
		if err != nil {
			db.Close()
			return nil, "", nil, &configError{err}
		}
		return pv, fmt.Sprintf("stored procedure (%s)", strings.Join(strings.Split(cfg.callParams, ","), ", ")), func() { db.Close() }, nil
	}

	tv, err := budget.NewTableValidator(ctx, tableConfig(budget.SQLQuery(db, cfg.tableQuery)))
	if err != nil {
		db.Close()
		return nil, "", nil, configErrorf("-table-query: %w", err)
	}
	return tv, fmt.Sprintf("budget table query (%d accounts, over budget: %s, refresh: %s)",
			tv.Table().Len(), strings.ToLower(string(over)), every(cfg.refresh)),
		func() { tv.Close(); db.Close() }, nil
}

func allowDescription(p []netip.Prefix) string {
	if len(p) == 0 {
		return "any address"
	}
	return auth.FormatAllowlist(p)
}

func every(d time.Duration) string {
	if d == 0 {
		return "never"
	}
	return "every " + d.String()
}

// serve runs srv on ln until ctx is done, then shuts it down, waiting up to
// shutdownTimeout for requests in flight.
func serve(ctx context.Context, srv *http.Server, ln net.Listener, log *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// holdsSetup is where holds and audit entries go.
type holdsSetup struct {
	store         budget.HoldStore // nil with -call
	audit         budget.AuditLog  // nil: no audit log
	describe      string
	auditDescribe string
	close         func()
}

// openHolds opens the holds store and the audit log of cfg. The audit file
// is reopened on SIGHUP until ctx is done.
func openHolds(ctx context.Context, cfg config, log *slog.Logger) (*holdsSetup, error) {
	hs := &holdsSetup{close: func() {}}
	if cfg.call != "" {
		if cfg.audit != "" {
			return nil, configErrorf("-audit applies to the budget table options, not to -call")
		}
		return hs, nil
	}
	var closers []func()
	hs.close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	var logs multiAudit
	if cfg.holdsPG != "" {
		pctx, cancel := context.WithTimeout(ctx, connectTimeout)
		s, err := pgholds.Open(pctx, cfg.holdsPG, pgholds.Options{})
		cancel()
		if err != nil {
			return nil, configErrorf("-holds-postgres: %w", err)
		}
		closers = append(closers, s.Close)
		hs.store, hs.describe = s, "in PostgreSQL (-holds-postgres), shared by every connector using it"
		logs = append(logs, s)
		hs.auditDescribe = "the budget_audit table beside the holds"
	} else {
		hs.store, hs.describe = budget.NewMemHolds(nil), "in memory: a restart forgets every hold (use -holds-postgres to keep them)"
	}
	if cfg.audit != "" {
		f, err := budget.OpenAuditFile(cfg.audit)
		if err != nil {
			hs.close()
			return nil, configErrorf("-audit: %w", err)
		}
		closers = append(closers, func() { f.Close() })
		logs = append(logs, f)
		if hs.auditDescribe != "" {
			hs.auditDescribe += " and "
		}
		hs.auditDescribe += cfg.audit + " (JSON lines; reopened on SIGHUP)"
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		done := make(chan struct{})
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-done:
					return
				case <-hup:
					if err := f.Reopen(); err != nil {
						log.Error("reopening the audit log failed; still writing to the old file", "err", err)
					} else {
						log.Info("audit log reopened", "file", cfg.audit)
					}
				}
			}
		}()
		closers = append(closers, func() { signal.Stop(hup); close(done) })
	}
	if len(logs) > 0 {
		hs.audit = logs
	}
	return hs, nil
}

// multiAudit records each entry in every log, in order; the first failure
// fails the request.
type multiAudit []budget.AuditLog

func (m multiAudit) Record(ctx context.Context, e budget.AuditEntry) error {
	for _, l := range m {
		if err := l.Record(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// listenError says, for an address already in use, what to do: the
// walkthroughs start several connectors, each on a port of its own.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s is in use (is another connector still running?): stop that one, or start this one with -addr and a free port: %w", addr, err)
	}
	return err
}
