// Command loadtest is the load harness of the library: with one command it
// generates a data set, starts examples/server on it, records each
// scenario's answer, starts the baseline server (bench/baseline) that
// replays those answers precomputed, and drives both with wrk, runs
// interleaved, then prints one table: per scenario the median requests/s,
// p50 and p99 latency of the real server and of the baseline, and their
// ratio.
//
//	go run ./bench/cmd/loadtest                       # memstore, 100,000 suppliers
//	go run ./bench/cmd/loadtest -postgres             # on a throwaway PostgreSQL
//	go run ./bench/cmd/loadtest -duration 3s -runs 1 -scenarios list,get-user
//
// Everything runs on 127.0.0.1 only. Every run is bounded (-duration), and
// the harness stops what it started (servers, PostgreSQL) when it ends or
// is interrupted. See bench/README.md for the scenarios and how to read
// the table.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/procurekit/procure/bench/internal/fixture"
	"github.com/procurekit/procure/bench/internal/gotool"
	"github.com/procurekit/procure/internal/cputime"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errChecks):
		os.Exit(1)
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(os.Stderr, "loadtest: interrupted; stopped everything it started")
		os.Exit(130)
	default:
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// errChecks reports that the load ran but a server answered a scenario
// wrongly (the table is printed; the exit status says it is suspect).
var errChecks = errors.New("some scenario checks failed")

type options struct {
	suppliers, users int
	seed             uint64
	duration, warmup time.Duration
	runs             int
	threads, conns   int
	scenarios        string
	dataFile         string
	manifestFile     string
	postgres         bool
	pgbouncer        bool
	pgDurable        bool
	pgRealtime       bool
	pgParams         string
	postgresDSN      string
	preloaded        bool
	work             string
	keep             bool
	out              string
	wrk              string
	install          bool
	readyTimeout     time.Duration
	readyLog         string
	writes           int
	writeWorkers     int
	writeBacklog     time.Duration
	server           string // examples/server binary to run instead of one built from the tree
	serverArgs       string // more arguments for the server, split at spaces
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.suppliers, "suppliers", 100000, "suppliers in the community under load (another community gets a ninth as many)")
	fs.IntVar(&o.users, "users", 1000, "users in the community under load")
	fs.Uint64Var(&o.seed, "seed", 1, "data generator seed")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "length of each measured wrk run (whole seconds)")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured run on each server before a scenario's runs; 0 for none")
	fs.IntVar(&o.runs, "runs", 3, "measured runs per scenario on each server, alternating real and baseline")
	fs.IntVar(&o.threads, "threads", 2, "wrk threads")
	fs.IntVar(&o.conns, "connections", 64, "wrk connections")
	fs.StringVar(&o.scenarios, "scenarios", "all", "comma-separated scenarios to run: "+strings.Join(scenarioNames, ", "))
	fs.StringVar(&o.dataFile, "data", "", "use this data `file` instead of generating one (needs -manifest)")
	fs.StringVar(&o.manifestFile, "manifest", "", "the examples/gendata -manifest `file` of -data")
	fs.BoolVar(&o.postgres, "postgres", false, "serve from a throwaway PostgreSQL server started for the run")
	fs.BoolVar(&o.pgbouncer, "pgbouncer", false, "with -postgres: the server reaches the throwaway server through PgBouncer in transaction mode (-postgres), migrating it directly (-postgres-migrate)")
	fs.BoolVar(&o.pgDurable, "postgres-durable", false, "with -postgres: the throwaway server keeps PostgreSQL's durability (fsync, synchronous_commit and full_page_writes on, as a deployment runs) instead of turning it off for speed")
	fs.BoolVar(&o.pgRealtime, "postgres-realtime", false, "with -postgres, as root: run the throwaway server's processes at a real-time priority (SCHED_RR "+strconv.Itoa(realtimePriority)+"), ahead of the node, wrk and the baseline, as a database host of its own would be; the report says how long its processes waited for a core either way")
	fs.StringVar(&o.pgParams, "postgres-params", "", "with -postgres: more `parameters` for the server's database URL, such as pool_max_conns=16&default_query_exec_mode=simple_protocol")
	fs.StringVar(&o.postgresDSN, "postgres-dsn", "", "serve from this PostgreSQL database instead (its data is replaced by the import)")
	fs.BoolVar(&o.preloaded, "preloaded", false, "with -postgres-dsn and -data: the database already holds the data file (imported by an earlier run or by procurectl import), so the server starts without importing it")
	fs.StringVar(&o.work, "work", "", "work `directory` (default: a new temporary one, removed at the end)")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory (data, logs, scripts, fixtures)")
	fs.StringVar(&o.out, "o", "", "also write the report to `file`")
	fs.StringVar(&o.wrk, "wrk", "", "path of the wrk binary (default: wrk on PATH)")
	fs.BoolVar(&o.install, "install", true, "install wrk with apt-get when it is missing and running as root")
	fs.DurationVar(&o.readyTimeout, "ready-timeout", 10*time.Minute, "how long the server may take to load its data")
	fs.StringVar(&o.readyLog, "ready-log", "", "after the server answers, also wait (within -ready-timeout) until its log contains this `text`, e.g. the line saying a background cache has loaded")
	fs.IntVar(&o.writes, "writes", 0, "supplier writes per second through the admin API while the scenarios run (write while reading); 0 for none")
	fs.IntVar(&o.writeWorkers, "write-workers", 16, "with -writes: the most writes in flight at once")
	fs.DurationVar(&o.writeBacklog, "write-backlog", time.Second, "with -writes: how far behind the rate the writes due while every worker is busy may queue (this long's writes); a write due while the queue is full is counted as missed; 0 for a queue of one place a worker")
	fs.StringVar(&o.server, "server", "", "run this examples/server `binary` instead of the one built from the tree (e.g. one built at another commit, for a before/after comparison)")
	fs.StringVar(&o.serverArgs, "server-args", "", "more `arguments` for examples/server, separated by spaces (e.g. \"-admin-addr 127.0.0.1:0\", which turns its metrics on)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.suppliers < 1:
		return o, fmt.Errorf("-suppliers: must be at least 1 (got %d)", o.suppliers)
	case o.users < 1:
		return o, fmt.Errorf("-users: must be at least 1 (got %d)", o.users)
	case o.duration < time.Second:
		return o, fmt.Errorf("-duration: must be at least 1s (got %s)", o.duration)
	case o.warmup != 0 && o.warmup < time.Second:
		return o, fmt.Errorf("-warmup: must be 0 or at least 1s (got %s)", o.warmup)
	case o.runs < 1:
		return o, fmt.Errorf("-runs: must be at least 1 (got %d)", o.runs)
	case o.threads < 1 || o.conns < o.threads:
		return o, fmt.Errorf("-threads %d, -connections %d: need at least one thread and a connection per thread", o.threads, o.conns)
	case (o.dataFile == "") != (o.manifestFile == ""):
		return o, errors.New("-data and -manifest go together (examples/gendata -o FILE -manifest FILE)")
	case o.postgres && o.postgresDSN != "":
		return o, errors.New("-postgres and -postgres-dsn: give one")
	case o.pgParams != "" && !o.postgres:
		return o, errors.New("-postgres-params needs -postgres (with -postgres-dsn, put them in the URL)")
	case o.pgRealtime && !o.postgres:
		return o, errors.New("-postgres-realtime needs -postgres (a database given by -postgres-dsn runs at the priority its operator gave it)")
	case o.pgDurable && !o.postgres:
		return o, errors.New("-postgres-durable needs -postgres (a database given by -postgres-dsn keeps its own settings, which the report names)")
	case o.pgbouncer && !o.postgres:
		return o, errors.New("-pgbouncer needs -postgres (with -postgres-dsn, give the pooler's URL and -server-args \"-postgres-migrate URL\")")
	case o.preloaded && (o.postgresDSN == "" || o.dataFile == ""):
		return o, errors.New("-preloaded needs -postgres-dsn and the -data/-manifest the database holds")
	case o.writes < 0 || o.writes > 100000:
		return o, fmt.Errorf("-writes: must be from 0 to 100000 per second (got %d)", o.writes)
	case o.writeWorkers < 1 || o.writeWorkers > 1024:
		return o, fmt.Errorf("-write-workers: must be from 1 to 1024 (got %d)", o.writeWorkers)
	case o.writeBacklog < 0 || o.writeBacklog > time.Minute:
		return o, fmt.Errorf("-write-backlog: must be from 0 to 1m (got %s)", o.writeBacklog)
	}
	if _, err := selectScenarios(nil, o.scenarios); err != nil {
		return o, err
	}
	return o, nil
}

// scenarioNames are the scenarios in the order they run: the reads first,
// then the user writes, create-user last. Each create adds a user to the
// store (hundreds of thousands in a run), and a store grown by them makes
// every later scenario pay more for garbage collection: random-supplier
// measured 61-63% of the baseline after create-user, 70-71% before it
// (bench/README.md, session 9).
var scenarioNames = []string{"list", "list-query", "list-modified", "page-1000", "get-supplier", "contacts",
	"random-supplier", "random-page", "get-user", "update-user", "create-user"}

// selectScenarios keeps the scenarios named in the comma-separated list
// (or all), in the canonical order.
func selectScenarios(all []scenario, list string) ([]scenario, error) {
	if list == "" || list == "all" {
		return all, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(scenarioNames, n) {
			return nil, fmt.Errorf("-scenarios: unknown scenario %q (known: %s)", n, strings.Join(scenarioNames, ", "))
		}
		want[n] = true
	}
	var out []scenario
	for _, sc := range all {
		if want[sc.Name] {
			out = append(out, sc)
		}
	}
	return out, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
	}
	var cl cleanup
	defer cl.run(stderr)

	root, err := gotool.ModuleRoot(ctx)
	if err != nil {
		return err
	}
	wrkBin, err := findWrk(ctx, o.wrk, o.install, logf)
	if err != nil {
		return err
	}
	work := o.work
	if work == "" {
		if work, err = os.MkdirTemp("", "procure-bench-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	if !o.keep && o.work == "" {
		cl.add(func() error { return os.RemoveAll(work) })
	} else {
		logf("work directory: %s", work)
	}

	logf("building examples/server, examples/gendata and bench/baseline")
	bin := filepath.Join(work, "bin")
	if err := gotool.Build(ctx, root, bin, "./examples/server", "./examples/gendata", "./bench/baseline"); err != nil {
		return err
	}

	dataFile, manifestFile := o.dataFile, o.manifestFile
	if dataFile == "" {
		dataFile, manifestFile = filepath.Join(work, "data.json"), filepath.Join(work, "manifest.json")
		// The community under load holds -suppliers; a second community
		// holds a ninth as many, so that the store is shared as in
		// production.
		other := o.suppliers / 9
		otherUsers := o.users / 9
		logf("generating %d suppliers (+%d in a second community) and %d users, seed %d", o.suppliers, other, o.users, o.seed)
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "gendata"), "-q",
			"-suppliers", strconv.Itoa(o.suppliers+other), "-other-suppliers", strconv.Itoa(other),
			"-users", strconv.Itoa(o.users+otherUsers), "-other-users", strconv.Itoa(otherUsers),
			"-seed", strconv.FormatUint(o.seed, 10), "-o", dataFile, "-manifest", manifestFile)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("gendata: %w\n%s", err, out)
		}
	}
	var m manifest
	if b, err := os.ReadFile(manifestFile); err != nil {
		return err
	} else if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %w", manifestFile, err)
	}
	cr, err := m.creds()
	if err != nil {
		return err
	}
	nonce := strconv.FormatInt(time.Now().UnixNano()%(1<<40), 36)
	all, err := scenarios(&m, nonce)
	if err != nil {
		return err
	}
	scs, err := selectScenarios(all, o.scenarios)
	if err != nil {
		return err
	}

	backend := "memstore"
	var serverArgs []string
	if !o.preloaded {
		serverArgs = []string{"-data", dataFile}
	}
	dsn := o.postgresDSN
	direct := dsn    // the database itself, not a pooler in front of it
	var pgs *pgSched // the throwaway server's processes (-postgres)
	if o.postgres {
		logf("starting a throwaway PostgreSQL server")
		pg, err := startPostgres(ctx, o.pgDurable)
		if pg != nil {
			cl.add(pg.stop)
		}
		if err != nil {
			return err
		}
		root, err := pg.postmasterPID()
		if err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(root), "task")); err == nil {
			pgs = &pgSched{proc: "/proc", root: root} // Linux's /proc: the report has the processes' times
		}
		if o.pgRealtime {
			pids, err := cputime.Family("/proc", root)
			if err == nil {
				err = setRealtime(pids)
			}
			if err != nil {
				return fmt.Errorf("-postgres-realtime: %w (it needs root, outside a container or control group that forbids real-time tasks)", err)
			}
		}
		dsn = pg.DSN
		direct = dsn
		if o.pgbouncer {
			logf("starting PgBouncer in front of it")
			cl.add(pg.stopBouncer) // before pg.stop, which removes its directory
			pooled, err := pg.startBouncer(ctx)
			if err != nil {
				return err
			}
			serverArgs = append(serverArgs, "-postgres-migrate", dsn)
			dsn = pooled
		}
	}
	if dsn != "" {
		backend = "PostgreSQL"
		if o.pgbouncer {
			backend = "PostgreSQL through PgBouncer (transaction mode)"
		}
		if o.postgres && o.pgParams != "" {
			dsn += "&" + o.pgParams
			backend += " (" + o.pgParams + ")"
		}
		d, err := durability(ctx, direct)
		if err != nil {
			return err
		}
		backend += ", " + d
		if o.pgRealtime {
			backend += ", its processes at real-time priority (SCHED_RR " + strconv.Itoa(realtimePriority) + ")"
		}
		serverArgs = append(serverArgs, "-postgres", dsn)
	}

	port, err := freePort()
	if err != nil {
		return err
	}
	realBase := "http://127.0.0.1:" + strconv.Itoa(port)
	var adminBase, adminToken string
	if o.writes > 0 {
		aport, err := freePort()
		if err != nil {
			return err
		}
		adminBase = "http://127.0.0.1:" + strconv.Itoa(aport)
		adminToken = "procure_at_bench_" + nonce
		serverArgs = append(serverArgs, "-admin-addr", "127.0.0.1:"+strconv.Itoa(aport))
		// The server reads its admin token from the environment, which
		// it inherits from the harness.
		if err := os.Setenv(adminTokenEnv, adminToken); err != nil {
			return err
		}
	}
	serverArgs = append(serverArgs, strings.Fields(o.serverArgs)...)
	serverBin := filepath.Join(bin, "server")
	if o.server != "" {
		serverBin = o.server
	}
	logf("starting examples/server (%s) on %s", backend, realBase)
	loadStart := time.Now()
	srv, err := startProc("examples/server", filepath.Join(work, "server.log"), serverBin,
		append([]string{"-addr", "127.0.0.1:" + strconv.Itoa(port)}, serverArgs...)...)
	if err != nil {
		return err
	}
	cl.add(func() error { return srv.stop(15 * time.Second) })
	readySc := scenario{Method: "GET", Target: suppliersPath + "?size=1"}
	readyReq := func(ctx context.Context) (int, []byte, error) { return do(ctx, realBase, readySc, cr) }
	if err := waitReady(ctx, srv, readyReq, o.readyTimeout); err != nil {
		return err
	}
	if o.readyLog != "" {
		logf("server answers; waiting for its log to say %q", o.readyLog)
		if err := waitLog(ctx, srv, o.readyLog, o.readyTimeout); err != nil {
			return err
		}
	}
	loadTook := time.Since(loadStart)
	rss, _ := rssOf(srv.cmd.Process.Pid) // informative only; 0 when unreadable
	logf("server ready after %.1fs, resident memory %.0f MB", loadTook.Seconds(), float64(rss)/1e6)

	// Record each scenario's answer from the real server, and check it.
	logf("recording the responses of %d scenarios", len(scs))
	fixturesPath := filepath.Join(work, "fixtures.jsonl")
	fw, err := fixture.Create(fixturesPath)
	if err != nil {
		return err
	}
	cl.add(func() error { return fw.Close() }) // after a failure; closing twice is harmless
	recorded := map[string]bool{}
	var failed []string
	for _, sc := range scs {
		if sc.Random != "" {
			continue // recorded with its whole set below
		}
		resp, body, err := exchange(ctx, realBase, sc, cr)
		if err != nil {
			return fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		if err := sc.check(resp.StatusCode, body); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", sc.Name, err))
			logf("CHECK FAILED %s: %v", sc.Name, err)
		}
		if err := fw.Write(fixture.Record(sc.Method, sc.Target, resp, body)); err != nil {
			return err
		}
		recorded[fixture.Key(sc.Method, sc.Target)] = true
	}
	if f, err := recordRandomSets(ctx, scs, recorded, fw, realBase, cr, m.Communities[0].Suppliers, work, logf); err != nil {
		return err
	} else {
		failed = append(failed, f...)
	}
	if err := fw.Close(); err != nil {
		return err
	}

	bport, err := freePort()
	if err != nil {
		return err
	}
	baseBase := "http://127.0.0.1:" + strconv.Itoa(bport)
	base, err := startProc("bench/baseline", filepath.Join(work, "baseline.log"), filepath.Join(bin, "baseline"),
		"-addr", "127.0.0.1:"+strconv.Itoa(bport), "-fixtures", fixturesPath)
	if err != nil {
		return err
	}
	cl.add(func() error { return base.stop(10 * time.Second) })
	// The baseline answers the first scenario's request with 200 once up
	// (after reading the fixtures: some seconds for the random sets).
	baseReady := func(ctx context.Context) (int, []byte, error) { return do(ctx, baseBase, scs[0], cr) }
	if err := waitReady(ctx, base, baseReady, o.readyTimeout); err != nil {
		return err
	}
	baseRSS, _ := rssOf(base.cmd.Process.Pid) // informative only

	var w *writer
	loadStarted := time.Now()
	if o.writes > 0 {
		w = newWriter(adminBase, adminToken, m.Communities[0].ID, nonce, o.writes, o.writeWorkers, o.writeBacklog)
		wctx, stopWrites := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { w.run(wctx); close(done) }()
		defer func() { stopWrites(); <-done }()
		logf("writing %d suppliers a second through the admin API while the scenarios run", o.writes)
	}

	wo := wrkOptions{bin: wrkBin, threads: o.threads, connections: o.conns, timeout: 10 * time.Second}
	rows := make([]row, len(scs))
	var phases []phase // of the warm-ups and runs, for the writer's and PostgreSQL's lines
	// measure runs one wrk run on target and records its phase.
	measure := func(target string, run func() error) error {
		var pg0 schedTimes
		if pgs != nil {
			pg0 = pgs.now()
		}
		from := time.Now()
		if err := run(); err != nil {
			return err
		}
		p := phase{target: target, from: from, to: time.Now()}
		if pgs != nil {
			p.pg = pgs.now().sub(pg0)
		}
		phases = append(phases, p)
		return nil
	}
	total := len(scs) * (2*o.runs*int(o.duration/time.Second) + 2*int(o.warmup/time.Second))
	logf("load: %d scenarios, %d runs of %s on each server, about %s", len(scs), o.runs, o.duration, time.Duration(total)*time.Second)
	for i, sc := range scs {
		rows[i].sc = sc
		script := filepath.Join(work, "wrk-"+sc.Name+".lua")
		if err := os.WriteFile(script, []byte(sc.script(cr)), 0o600); err != nil {
			return err
		}
		type target struct {
			name, base string
			pid        int
			into       *[]result
		}
		targets := []target{{"server", realBase, srv.cmd.Process.Pid, &rows[i].real}, {"baseline", baseBase, base.cmd.Process.Pid, &rows[i].base}}
		if o.warmup > 0 {
			for _, t := range targets {
				err := measure(t.name, func() error {
					_, err := runWrk(ctx, wo, script, t.base, sc.Target, o.warmup, nonce+"w"+t.name[:1])
					return err
				})
				if err != nil {
					return fmt.Errorf("%s warm-up on %s: %w", sc.Name, t.name, err)
				}
			}
		}
		for k := 0; k < o.runs; k++ {
			// Alternate which server goes first, so that a drift in the
			// machine's speed does not favour either.
			order := targets
			if k%2 == 1 {
				order = []target{targets[1], targets[0]}
			}
			for _, t := range order {
				tag := nonce + "r" + strconv.Itoa(k) + t.name[:1]
				cpu0, cpuErr := cputime.Used("/proc", t.pid)
				var r result
				err := measure(t.name, func() (err error) {
					r, err = runWrk(ctx, wo, script, t.base, sc.Target, o.duration, tag)
					return err
				})
				if err != nil {
					return fmt.Errorf("%s run %d on %s: %w", sc.Name, k+1, t.name, err)
				}
				if cpu1, err := cputime.Used("/proc", t.pid); err == nil && cpuErr == nil {
					r.CPU = cpu1 - cpu0
				}
				*t.into = append(*t.into, r)
				logf("%-13s %-8s run %d/%d: %8.0f req/s  p50 %-8s p99 %-8s errors %d", sc.Name, t.name, k+1, o.runs,
					r.RPS(), formatLatency(r.P50), formatLatency(r.P99), r.Errors())
			}
		}
	}

	var report bytes.Buffer
	goVersion := runtime.Version()
	if out, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output(); err == nil {
		goVersion = strings.TrimSpace(string(out))
	}
	c0 := m.Communities[0]
	fmt.Fprintf(&report, "procure load test: examples/server on %s, %d suppliers and %d users in community %s\n",
		backend, c0.Suppliers, c0.Users, c0.ID)
	fmt.Fprintf(&report, "machine: %d CPU cores (%s/%s), %s; %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, goVersion, wrkVersion(wrkBin))
	fmt.Fprintf(&report, "load: wrk -t%d -c%d, %s per run, %d runs per server interleaved (medians shown), %s warm-up; wrk, server and baseline share the cores\n",
		o.threads, o.conns, o.duration, o.runs, o.warmup)
	fmt.Fprintf(&report, "server: ready %.1fs after start, %.0f MB resident\n", loadTook.Seconds(), float64(rss)/1e6)
	fmt.Fprintf(&report, "baseline: %d recorded answers, %.0f MB resident\n", fw.Len(), float64(baseRSS)/1e6)
	if w != nil {
		fmt.Fprintf(&report, "writes while reading (server only; the baseline serves fixed bytes): %s\n", w.stats(time.Since(loadStarted)))
		if rates := w.phaseRates(phases); len(rates) > 0 {
			fmt.Fprintf(&report, "writes done by phase: %s\n", joinRates(rates))
		}
	}
	if pgs != nil && len(phases) > 0 {
		fmt.Fprintf(&report, "PostgreSQL's processes: %s\n", joinPGPhases(pgPhases(phases)))
	}
	fmt.Fprintln(&report)
	writeTable(&report, rows, backend == "memstore", o.writes > 0)
	writeCPUTable(&report, rows)
	if len(failed) > 0 {
		fmt.Fprintf(&report, "\nCHECKS FAILED (the server answered wrongly; its figures are suspect):\n")
		for _, f := range failed {
			fmt.Fprintf(&report, "  %s\n", f)
		}
	}
	if _, err := stdout.Write(report.Bytes()); err != nil {
		return err
	}
	if o.out != "" {
		if err := os.WriteFile(o.out, report.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return errChecks
	}
	return nil
}

// do sends a scenario's request once and returns the status and body.
func do(ctx context.Context, base string, sc scenario, cr creds) (int, []byte, error) {
	resp, body, err := exchange(ctx, base, sc, cr)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, body, nil
}

// exchange sends a scenario's request once, with the headers wrk sends,
// and reads the whole answer.
func exchange(ctx context.Context, base string, sc scenario, cr creds) (*http.Response, []byte, error) {
	var body io.Reader
	if sc.Body != "" {
		body = strings.NewReader(sc.Body)
	}
	req, err := http.NewRequestWithContext(ctx, sc.Method, base+sc.Target, body)
	if err != nil {
		return nil, nil, err
	}
	if sc.Service {
		req.Header.Set("Service-Account-ID", cr.accountID)
		req.Header.Set("Service-API-Key", cr.key)
	} else {
		req.Header.Set("Authorization", "Bearer "+cr.token)
	}
	if sc.Body != "" {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}
