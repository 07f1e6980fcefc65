// Command server runs the procurement APIs of this library over HTTP: the
// supplier read API (Interface A), the user synchronisation API (Interface
// B) and a demo checkout route that shows account code validation
// (Interface C), on an in-memory store or on PostgreSQL.
//
//	go run ./examples/server                 # built-in demo data on 127.0.0.1:8080
//	go run ./examples/server -addr :9000     # listen elsewhere
//	go run ./examples/server -data my.json   # your own data file
//	go run ./examples/server -postgres postgres://localhost/procure   # keep the data in PostgreSQL
//	go run ./examples/server -postgres postgres://pgbouncer:6432/procure -postgres-migrate postgres://db:5432/procure \
//	    -postgres-read postgres://replica:5432/procure
//	                                         # through PgBouncer, migrations directly, reads from a replica
//	                                         # (README "PostgreSQL")
//	go run ./examples/server -finance-url http://127.0.0.1:8090/account-code-validation
//	                                         # demo checkout asks a finance system (examples/connector)
//	PROCURE_ADMIN_TOKEN=... go run ./examples/server -admin-addr 127.0.0.1:8081
//	                                         # the admin API on its own listener (examples/procurectl)
//	go run ./examples/server -log-format json -log-level debug
//
// The demo data (demo.json, embedded in the binary) holds two communities,
// acme-au (AU) and globex-us (US), with about fifty suppliers, bearer
// tokens, service accounts, users and budgets. On start the server prints
// its address and the demo credentials. With -postgres the demo checkout
// keeps its holds in the same database (budget/pgholds, one store per
// community), so several server nodes on one database share them and
// never overspend a budget together. A -data file has the same format
// (docs: datafile.md); a bad one stops the server with an error
// naming the file and the offending entry.
//
// The admin API (docs: admin.md) is off unless -admin-addr is given; it
// never shares the public listener. Its token comes from the environment
// variable PROCURE_ADMIN_TOKEN, or is generated at start and printed once.
// The admin listener also serves Prometheus metrics at /metrics (the
// admin token, or none with -metrics-open) and Go's profiles under
// /debug/pprof/ (the token): docs: operations.md.
//
// The server logs (log/slog, text or JSON on standard error) the store in
// use, migrations and the import (on PostgreSQL: its file, counts and
// duration), and one line per request: request id (also in the answer's
// X-Request-Id header), method, route (the matched pattern, e.g.
// /public/community/suppliers/{id}), status, duration in milliseconds and
// community - never a secret, a header or a query value.
//
// Both listeners answer GET /livez and GET /readyz (docs: operations.md
// "Health"), from the moment they open: the data loads after, with
// /readyz answering 503 and the API routes 503 UNAVAILABLE meanwhile.
//
// The server shuts down gracefully on SIGINT or SIGTERM: /readyz answers
// 503 at once; after -shutdown-delay (none by default) it stops accepting
// connections and lets requests in flight finish, for up to ten seconds.
package main

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/budget/pgholds"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/httpapi/health"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

// demoData is the built-in data set. Its secrets are demo secrets, printed
// on start; never reuse them.
//
//go:embed demo.json
var demoData []byte

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// errUsage marks a command line that flag parsing rejected (already
// reported on stderr).
var errUsage = errors.New("usage")

// config is the command line.
type config struct {
	addr       string // listen address
	adminAddr  string // admin API listen address; empty: no admin API
	logFormat  string // text or json
	logLevel   slog.Level
	maxImport  int64        // bound of an admin import body, in bytes
	gcHeadroom headroomFlag // -gc-headroom: the collector's headroom policy
	data       string       // data file; empty means the embedded demo data
	postgres   string       // PostgreSQL DSN; empty means the in-memory store
	pgMigrate  string       // the database's own DSN for migrations; empty: postgres
	pgRead     string       // a streaming replica's DSN for reads; empty: none
	pgCache    bool         // serve supplier reads from pgstore's per-node cache
	readyEarly bool         // ready while the cache loads (pgstore.WithReadyWhileCacheLoads)
	financeURL string       // finance system for the demo checkout; empty means the stored budget tables

	// shutdownDelay is how long the server keeps serving, with /readyz
	// answering 503, after a signal and before its listeners close.
	shutdownDelay time.Duration

	// adminToken is the admin API's token (set by run from the
	// environment, not a flag), and adminTokenMade whether run generated
	// it (it is then printed once).
	adminToken     string
	adminTokenMade bool

	metricsOpen bool // serve /metrics without the admin token
	// Set by run with the admin listener: the registry of the metrics,
	// and the admin token's check, shared by the admin API, /metrics
	// and /debug/pprof/.
	registry *prometheus.Registry
	guard    *httpapi.AdminGuard
}

// Server timeouts: generous for an API whose largest answer is one page of
// 100 suppliers, tight enough that idle or slow clients cannot pin
// connections.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 15 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 120 * time.Second
	shutdownTimeout   = 10 * time.Second
	maxHeaderBytes    = 64 << 10
)

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// Loopback by default: the demo tokens are public, so the demo must not
	// be reachable from the network unless asked for (-addr :8080).
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "listen `address` (host:port; :8080 listens on every interface)")
	fs.StringVar(&cfg.data, "data", "", "data `file` to serve instead of the built-in demo data (JSON, docs/datafile.md)")
	fs.StringVar(&cfg.postgres, "postgres", "", "PostgreSQL `URL` to keep the data in (postgres://user:pass@host:5432/db); the schema is created or migrated at start and the data (-data, or the demo data) is imported, idempotently")
	fs.StringVar(&cfg.pgMigrate, "postgres-migrate", "", "with -postgres: the database's own `URL` for the migrations at start, when -postgres goes through a pooler such as PgBouncer (default: -postgres)")
	fs.StringVar(&cfg.pgRead, "postgres-read", "", "with -postgres: the `URL` of a streaming replica of the database for reads (the supplier cache's loads and polls, credential lookups, reads the caches cannot serve), used only while it is less than 0.3 s behind and never older than this node's own writes")
	fs.BoolVar(&cfg.pgCache, "pg-cache", true, "with -postgres, serve supplier reads from a per-node cache in memory that follows the database's changes (pgstore.WithSupplierCache; loaded in the background at start, reads go to the database until then), serve user reads by username and id from a per-node copy of the users that follows it too (pgstore.WithUserCache) and remember credential lookups for half a second (pgstore.WithCredentialCache); -pg-cache=false reads every request from the database")
	fs.BoolVar(&cfg.readyEarly, "ready-while-loading", false, "with -postgres and the cache, answer /readyz 200 while the cache loads at start (reads go to the database meanwhile) instead of 503 until it is loaded: for a cluster whose nodes may all start at once (docs/operations.md)")
	fs.StringVar(&cfg.financeURL, "finance-url", "", "finance system `URL` the demo checkout asks over the XML exchange (e.g. http://127.0.0.1:8090/account-code-validation from examples/connector); empty uses the stored budget tables")
	fs.StringVar(&cfg.adminAddr, "admin-addr", "", "listen `address` of the admin API (host:port; off when empty). Its token is PROCURE_ADMIN_TOKEN, or one generated and printed at start")
	fs.StringVar(&cfg.logFormat, "log-format", "text", "log `format` on standard error: text or json")
	fs.BoolVar(&cfg.metricsOpen, "metrics-open", false, "serve GET /metrics on the admin listener without the admin token, for a scraper on a private network (docs/operations.md); the admin API and /debug/pprof/ still need it")
	fs.TextVar(&cfg.logLevel, "log-level", slog.LevelInfo, "log `level`: debug, info, warn or error")
	fs.DurationVar(&cfg.shutdownDelay, "shutdown-delay", 0, "on SIGINT or SIGTERM, keep serving for this `duration` with /readyz answering 503 before closing the listeners, so that a load balancer stops sending new requests first (e.g. 5s; docs/operations.md)")
	fs.Int64Var(&cfg.maxImport, "max-import-bytes", 64<<30, "largest data file the admin import accepts, in `bytes` (0: no bound)")
	fs.Var(&cfg.gcHeadroom, "gc-headroom", "memory the Go heap may grow by over its live size before a collection: a `size` (512MiB, 2GiB; 0 leaves Go's default pacing), or auto (the default), a quarter of the machine's or container's memory up to 1GiB. Fewer collections of the stores' indexes, less CPU a request; GOGC in the environment turns it off, GOMEMLIMIT still caps the heap (README, \"Sizing a node\")")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: server [-addr host:port] [-admin-addr host:port] [-data file.json] [-postgres URL [-postgres-migrate URL] [-postgres-read URL] [-pg-cache=false]] [-finance-url URL] [-log-format text|json] [-log-level level]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "server: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return cfg, errUsage
	}
	if cfg.logFormat != "text" && cfg.logFormat != "json" {
		fmt.Fprintf(stderr, "server: -log-format must be text or json (got %q)\n", cfg.logFormat)
		fs.Usage()
		return cfg, errUsage
	}
	if (cfg.pgMigrate != "" || cfg.pgRead != "") && cfg.postgres == "" {
		fmt.Fprintln(stderr, "server: -postgres-migrate and -postgres-read need -postgres")
		fs.Usage()
		return cfg, errUsage
	}
	// Port 0 picks a free port for each listener, so two ":0" differ.
	if cfg.adminAddr != "" && cfg.adminAddr == cfg.addr && !strings.HasSuffix(cfg.addr, ":0") {
		fmt.Fprintln(stderr, "server: -admin-addr must differ from -addr: the admin API never shares the public listener")
		fs.Usage()
		return cfg, errUsage
	}
	return cfg, nil
}

// run is the whole program: it serves until ctx is done, then shuts down
// gracefully. Tests call it directly.
//
// The listeners open first, so that an orchestrator can ask /livez and
// /readyz (and, on the admin listener, /metrics) while the data loads,
// which at a million suppliers takes minutes; until then /readyz says
// what the node waits for and every API route answers 503 UNAVAILABLE.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if cfg.adminAddr != "" {
		// Checked before the data loads, which may take minutes.
		if cfg.adminToken, cfg.adminTokenMade, err = adminToken(); err != nil {
			return err
		}
	}
	lw := newLogWriter(stderr, 100*time.Millisecond)
	defer lw.Close()
	log := newLogger(cfg, lw)
	if stop := keepGCHeadroom(cfg.gcHeadroom, log); stop != nil {
		defer stop()
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	listeners := []net.Listener{ln}
	if cfg.adminAddr != "" {
		aln, err := net.Listen("tcp", cfg.adminAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("admin listener: %w", err)
		}
		listeners = append(listeners, aln)
	}
	var metrics *httpapi.RequestMetrics
	if cfg.adminAddr != "" {
		// The metrics are served on the admin listener only: without
		// it nothing would read them.
		if cfg.registry, metrics, err = newMetrics(); err != nil {
			closeAll(listeners)
			return err
		}
		cfg.guard = httpapi.NewAdminGuard(httpapi.AdminOptions{Token: cfg.adminToken, Logger: log})
	}
	observe := func(h http.Handler) http.Handler {
		return httpapi.Observe(h, httpapi.ObserveOptions{Logger: log, Metrics: metrics})
	}
	var store storeCheck
	probes := health.New(log, health.Check{Name: "store", Check: store.ready})
	// The public listener's switch holds its whole mux: the probes with
	// "starting" until the data has loaded, then the probes with the
	// APIs' routes in one mux, so that a request is routed once (a mux
	// in front of the switch and another behind it cost every request a
	// second route lookup, about half a microsecond).
	public := newSwitch(hostMux(probes, starting()))
	servers := []*http.Server{newServer(observe(public), log)}
	var admin *handlerSwitch
	if len(listeners) > 1 {
		admin = newSwitch(starting())
		mux := hostMux(probes, admin)
		operatorRoutes(mux, cfg.guard, cfg.registry, cfg.metricsOpen)
		servers = append(servers, newServer(observe(mux), log))
	}
	sv := startServing(servers, listeners)
	beforeLoad(listeners)

	log.Info("store", "kind", storeKind(cfg), "data", dataName(cfg.data))
	data, be, err := openAll(ctx, cfg, log, func() *http.ServeMux { return hostMux(probes, nil) })
	if err != nil {
		_ = sv.stop(log, probes, 0) // the load's error is the one to report
		return err
	}
	defer be.close()
	public.set(be.public)
	store.set(be.store)

	var adminBase, shownToken string
	if admin != nil {
		admin.set(be.admin)
		adminBase = "http://" + displayAddr(listeners[1].Addr())
		if cfg.adminTokenMade {
			shownToken = cfg.adminToken
		}
		log.Info("admin API listening", "addr", listeners[1].Addr().String())
	}
	base := "http://" + displayAddr(ln.Addr())
	printBanner(stdout, base, data.file, data.suppliers, cfg.data == "")
	printAdminBanner(stdout, adminBase, shownToken)
	log.Info("listening", "addr", ln.Addr().String(), "communities", len(data.file.Communities))

	return sv.wait(ctx, log, probes, cfg.shutdownDelay)
}

// beforeLoad is called once the listeners serve, before the data loads
// (a test holds the load there).
var beforeLoad = func([]net.Listener) {}

// opened is the backend with the handlers over it, and what releases it.
type opened struct {
	store  backend
	public http.Handler // the APIs of the public listener
	admin  http.Handler // the admin API; nil without -admin-addr
	close  func()
}

// openAll opens the backend, loads the data into it, and builds the
// handlers over it: the public one on the mux that newMux returns.
func openAll(ctx context.Context, cfg config, log *slog.Logger, newMux func() *http.ServeMux) (loaded, opened, error) {
	data, store, closeStore, err := openData(ctx, cfg, log)
	if err != nil {
		return loaded{}, opened{}, err
	}
	o := opened{store: store, close: closeStore}
	if ms, ok := store.(*memstore.Store); ok && cfg.registry != nil {
		// pgstore registers its metrics at Open (pgOptions); memstore's
		// are its write latency.
		if err := ms.RegisterMetrics(cfg.registry); err != nil {
			closeStore()
			return loaded{}, opened{}, err
		}
	}
	holds, closeHolds, err := openHolds(ctx, cfg)
	if err != nil {
		closeStore()
		return loaded{}, opened{}, err
	}
	o.close = func() { closeHolds(); closeStore() }
	if o.public, err = newHandler(newMux(), store, cfg.financeURL, holds, log); err != nil {
		o.close()
		return loaded{}, opened{}, err
	}
	if cfg.adminAddr != "" {
		if o.admin, err = newAdminHandler(store, cfg, log); err != nil {
			o.close()
			return loaded{}, opened{}, err
		}
	}
	return data, o, nil
}

// newServer is an http.Server with the program's timeouts and limits.
func newServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		// No BaseContext tied to ctx: requests in flight at shutdown must
		// finish, not see their context cancelled by the signal.
	}
}

// backend is what the server serves from: memstore.Store and
// pgstore.Store both implement every part.
type backend interface {
	procure.Readier
	supplier.Store
	auth.TokenStore
	user.Store
	auth.KeyStore
	auth.KeyHashStore // SCIM clients send the API key alone
	checkoutBudgets
}

var (
	_ backend = (*memstore.Store)(nil)
	_ backend = (*pgstore.Store)(nil)
)

// loaded is what the banner tells of the data: the communities (their
// suppliers left out when the file was streamed) and the supplier count.
type loaded struct {
	file      *datafile.File
	suppliers int
}

// openData opens the backend and loads the data into it. A -data file is
// streamed: into memstore by its Loader (the file is never in memory as a
// whole, and the decoded suppliers become the store's records), into
// PostgreSQL by pgstore's ImportStream, with progress and totals logged.
// The built-in demo data is parsed (the banner shows its credentials) and
// read into memstore by LoadReader, or imported into PostgreSQL.
func openData(ctx context.Context, cfg config, log *slog.Logger) (loaded, backend, func(), error) {
	if cfg.data != "" && cfg.postgres != "" {
		return importData(ctx, cfg, log)
	}
	if cfg.data != "" && cfg.postgres == "" {
		store := memstore.New()
		b := &bannerLoader{Handler: store.Loader()}
		if err := datafile.StreamFile(cfg.data, b); err != nil {
			return loaded{}, nil, nil, err
		}
		return loaded{file: &datafile.File{Communities: b.communities}, suppliers: b.suppliers}, store, func() {}, nil
	}
	f, err := loadData(cfg.data)
	if err != nil {
		return loaded{}, nil, nil, err
	}
	store, closeStore, err := openBackend(ctx, cfg, f, log)
	if err != nil {
		return loaded{}, nil, nil, err
	}
	n := 0
	for _, c := range f.Communities {
		n += len(c.Suppliers)
	}
	return loaded{file: f, suppliers: n}, store, closeStore, nil
}

// bannerLoader passes a stream on to the store's loader, keeping what the
// banner needs.
type bannerLoader struct {
	datafile.Handler
	communities []datafile.Community
	suppliers   int
}

func (b *bannerLoader) Community(i int, c *datafile.Community, n int) error {
	if err := b.Handler.Community(i, c, n); err != nil {
		return err
	}
	b.communities = append(b.communities, datafile.Community{ID: c.ID, Name: c.Name, Region: c.Region})
	b.suppliers += n
	return nil
}

// openBackend returns the store holding the built-in demo data, data
// parsed: in memory, or PostgreSQL when cfg.postgres is set (the schema is
// migrated and data imported, which changes nothing when the database
// already holds it). The returned func releases the store.
func openBackend(ctx context.Context, cfg config, data *datafile.File, log *slog.Logger) (backend, func(), error) {
	if cfg.postgres == "" {
		store, err := memstore.LoadReader(bytes.NewReader(demoData))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", dataName(""), err)
		}
		return store, func() {}, nil
	}
	pg, err := pgstore.Open(ctx, cfg.postgres, pgOptions(cfg, log)...)
	if err != nil {
		return nil, nil, err
	}
	// The demo data, which the banner needs parsed, is streamed into the
	// database like a -data file, and its import logged alike.
	if _, err := importLogged(ctx, log, pg, dataName(cfg.data), bytes.NewReader(demoData), int64(len(demoData))); err != nil {
		pg.Close()
		return nil, nil, err
	}
	return pg, pg.Close, nil
}

// pgOptions are the options of the PostgreSQL store.
func pgOptions(cfg config, log *slog.Logger) []pgstore.Option {
	opts := []pgstore.Option{pgstore.WithLogger(log), pgstore.WithDefaultMaxConns(storeConns())}
	if cfg.pgMigrate != "" {
		opts = append(opts, pgstore.WithMigrateDSN(cfg.pgMigrate))
	}
	if cfg.pgRead != "" {
		opts = append(opts, pgstore.WithReadDSN(cfg.pgRead))
	}
	if cfg.pgCache {
		opts = append(opts, pgstore.WithSupplierCache(), pgstore.WithUserCache(), pgstore.WithCredentialCache())
	}
	if cfg.readyEarly {
		opts = append(opts, pgstore.WithReadyWhileCacheLoads())
	}
	if cfg.registry != nil {
		opts = append(opts, pgstore.WithMetrics(cfg.registry))
	}
	return opts
}

// storeConns is the server's pool size for the store when the -postgres
// URL names no pool_max_conns: six times pgxpool's default (the greater of
// 4 and the CPUs), directly or through a pooler, which leaves the supplier
// writes four times pgxpool's default and the rest to everything else
// (pgstore keeps a quarter of the pool from its writes: write_slots.go).
// Each supplier write holds a connection for two round trips, and under
// read load most of that is waiting for a core or for the community's
// lock, not work of the database's: with pgxpool's 4 the writes queued for
// a connection (on the 2-core machine of bench/README.md, 98% of the
// acquires found the pool empty and waited 31 ms on average), and 16
// connections did 1.5-1.9 times the writes a second of 4. README "Sizing"
// counts them against the database's max_connections.
func storeConns() int32 {
	return 6 * int32(max(4, runtime.NumCPU()))
}

// openHolds returns the holds stores of the demo checkout's communities:
// nil (each community's holds in memory) without -postgres or when a
// finance system decides; with -postgres, stores in the same database
// (its migrations applied once here) on one pool, so that every server
// node on that database shares each community's holds. The returned func
// closes the pool.
func openHolds(ctx context.Context, cfg config) (func(community string) (budget.HoldStore, error), func(), error) {
	if cfg.postgres == "" || cfg.financeURL != "" {
		return nil, func() {}, nil
	}
	s, err := pgholds.Open(ctx, cfg.postgres, pgholds.Options{MigrateDSN: cfg.pgMigrate})
	if err != nil {
		return nil, nil, err
	}
	return func(community string) (budget.HoldStore, error) { return s.WithCommunity(community), nil }, s.Close, nil
}

// newHandler is the server's routes: the supplier API (Interface A), the
// user API (Interface B) and the demo checkout route (Interface C; the
// example host's own route, not part of the spec's API), mounted on mux.
// holds returns a community's holds store; nil keeps them in memory.
func newHandler(mux *http.ServeMux, store backend, financeURL string, holds func(string) (budget.HoldStore, error), log *slog.Logger) (http.Handler, error) {
	httpapi.MountSuppliers(mux, httpapi.SupplierOptions{Store: store, Tokens: store, Logger: log})
	users := user.NewService(store)
	httpapi.MountUsers(mux, httpapi.UserOptions{Users: users, Accounts: store, Logger: log})
	// SCIM 2.0 for Okta and Entra, over the same users (README
	// "Provisioning from Okta or Entra").
	httpapi.MountSCIM(mux, httpapi.SCIMOptions{Users: users, Accounts: store, Logger: log})
	err := mountCheckoutDemo(mux, checkoutConfig{Store: store, Tokens: store, FinanceURL: financeURL,
		FinanceToken: os.Getenv("PROCURE_CONNECTOR_TOKEN"), Logger: log, Holds: holds})
	if err != nil {
		return nil, err
	}
	return mux, nil
}

// loadData reads the data file at path, or the embedded demo data when path
// is empty. Errors start with the file name and name the entry.
func loadData(path string) (*datafile.File, error) {
	if path == "" {
		f, err := datafile.Parse(bytes.NewReader(demoData))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dataName(""), err)
		}
		return f, nil
	}
	return datafile.ReadFile(path)
}

func dataName(path string) string {
	if path == "" {
		return "built-in demo.json"
	}
	return path
}

// displayAddr renders a listen address as one a browser or curl can use:
// an unspecified host (":8080", "0.0.0.0:8080", "[::]:8080") becomes
// localhost.
func displayAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		return net.JoinHostPort("localhost", fmt.Sprint(tcp.Port))
	}
	return tcp.String()
}

// printBanner tells the user where the API is and, for the demo data, how
// to call it. Secrets from a -data file are never printed.
func printBanner(w io.Writer, base string, data *datafile.File, suppliers int, demo bool) {
	fmt.Fprintf(w, "procure example server on %s\n", base)
	fmt.Fprintf(w, "  supplier API: %s%s/suppliers\n", base, httpapi.SupplierBasePath)
	fmt.Fprintf(w, "  OpenAPI:      %s%s/openapi.json\n", base, httpapi.SupplierBasePath)
	if !demo {
		fmt.Fprintf(w, "  data: %d communities, %d suppliers\n", len(data.Communities), suppliers)
		return
	}
	fmt.Fprintln(w, "\nDemo bearer tokens (demo data only; never use these anywhere else):")
	now := time.Now()
	var noScope string
	for _, c := range data.Communities {
		for _, t := range c.Tokens {
			usable := !t.Revoked && (t.Expires == nil || now.Before(*t.Expires))
			switch {
			case !usable:
			case slices.Contains(t.Scopes, auth.ScopeSuppliersRead):
				note := ""
				if t.Expires != nil {
					note = ", expires " + t.Expires.UTC().Format(time.DateOnly)
				}
				fmt.Fprintf(w, "  %-10s %-24s scope %s%s\n", c.ID, t.Token, auth.ScopeSuppliersRead, note)
			case noScope == "":
				noScope = t.Token
				fmt.Fprintf(w, "  %-10s %-24s no %s scope: answers 403\n", c.ID, t.Token, auth.ScopeSuppliersRead)
			}
		}
	}
	fmt.Fprintln(w, "\nDemo service accounts of the user API (Service-Account-ID / Service-API-Key):")
	for _, c := range data.Communities {
		for _, a := range c.ServiceAccounts {
			for _, k := range a.Keys {
				if !k.Active {
					continue
				}
				allow := "any address"
				if len(a.AllowedIPs) > 0 {
					allow = "from " + strings.Join(a.AllowedIPs, ", ")
				}
				fmt.Fprintf(w, "  %-10s %-14s %-32s %s\n", c.ID, a.ID, k.Key, allow)
			}
		}
	}
	fmt.Fprintf(w, "  user API: %s/v1/users (OpenAPI: %s/v1/openapi.json)\n", base, base)
	fmt.Fprintf(w, "  SCIM 2.0: %s%s (Authorization: Bearer <API key>; OpenAPI: %s%s/openapi.json)\n", base, httpapi.SCIMBasePath, base, httpapi.SCIMBasePath)
	fmt.Fprintf(w, "\nDemo checkout (this example's own route, not part of the spec's API): POST %s%s\n", base, checkoutPath)
	fmt.Fprintln(w, "\nTry:")
	if token := firstReadToken(data); token != "" {
		fmt.Fprintf(w, "  curl -H 'Authorization: Bearer %s' '%s%s/suppliers?size=5&sort=name,asc'\n", token, base, httpapi.SupplierBasePath)
	}
	if id, key := firstServiceKey(data); id != "" {
		fmt.Fprintf(w, "  curl -H 'Service-Account-ID: %s' -H 'Service-API-Key: %s' '%s/v1/users/username/jsmith'\n", id, key, base)
	}
	fmt.Fprintln(w)
}

// firstServiceKey returns the first active key of a service account without
// an IP allowlist, the one the banner's example uses.
func firstServiceKey(data *datafile.File) (id, key string) {
	for _, c := range data.Communities {
		for _, a := range c.ServiceAccounts {
			if len(a.AllowedIPs) > 0 {
				continue
			}
			for _, k := range a.Keys {
				if k.Active {
					return a.ID, k.Key
				}
			}
		}
	}
	return "", ""
}

func firstReadToken(data *datafile.File) string {
	for _, c := range data.Communities {
		for _, t := range c.Tokens {
			if !t.Revoked && t.Expires == nil && slices.Contains(t.Scopes, auth.ScopeSuppliersRead) {
				return t.Token
			}
		}
	}
	return ""
}
