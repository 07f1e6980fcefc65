package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/userapi"
)

// apiKeyEnv is the only place the API key is read from.
const apiKeyEnv = "PROCURE_API_KEY"

// config is the parsed command line.
type config struct {
	url, account, file, format string
	concurrency, retries       int
	dryRun, verbose            bool
	timeout, retryWait         time.Duration
	autoRoles                  []string
}

// run is the program: it returns the exit status. getenv reads the
// environment; stdin is read for -file -.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "usersync:", err)
		return 2
	}
	key := getenv(apiKeyEnv)
	if key == "" {
		fmt.Fprintf(stderr, "usersync: set the API key in the environment variable %s (it is never taken from a flag)\n", apiKeyEnv)
		return 2
	}

	rows, probs, err := readFile(cfg, stdin)
	if err != nil {
		fmt.Fprintln(stderr, "usersync:", err)
		return 2
	}
	check(rows, probs) // the rows whose cells decoded; all problems are listed at once
	if len(probs.list) > 0 {
		for _, l := range probs.lines() {
			fmt.Fprintln(stderr, l)
		}
		fmt.Fprintf(stderr, "usersync: %s has %d problem(s); nothing was synced\n", cfg.file, len(probs.list))
		return 1
	}

	hc := &http.Client{Timeout: cfg.timeout, Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConnsPerHost: cfg.concurrency,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}}
	client, err := userapi.New(cfg.url, cfg.account, key,
		userapi.WithHTTPClient(hc), userapi.WithUserAgent("procurekit-usersync/1"), userapi.WithAutoRoles(cfg.autoRoles...))
	if err != nil {
		fmt.Fprintln(stderr, "usersync:", err)
		return 2
	}
	s := &syncer{cfg: cfg, client: client, rows: rows, results: make([]result, len(rows))}
	s.run(ctx, stderr)
	return s.report(stdout, probs.file)
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("usersync", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	var autoRoles string
	fs.StringVar(&cfg.url, "url", "http://127.0.0.1:8080", "base URL of the user API (the service host; /v1 is added)")
	fs.StringVar(&cfg.account, "account", "", "service account id (Service-Account-ID)")
	fs.StringVar(&cfg.file, "file", "", `the HRIS export (CSV or JSON Lines); "-" reads standard input`)
	fs.StringVar(&cfg.format, "format", "", "csv or jsonl (default: from the file's extension)")
	fs.IntVar(&cfg.concurrency, "concurrency", 8, "users synced at once")
	fs.BoolVar(&cfg.dryRun, "dry-run", false, "report what would change without writing")
	fs.DurationVar(&cfg.timeout, "timeout", 30*time.Second, "timeout of each HTTP request")
	fs.IntVar(&cfg.retries, "retries", 4, "retries of a user after a network error or a 5xx/429 answer")
	fs.DurationVar(&cfg.retryWait, "retry-wait", 500*time.Millisecond, "wait before the first retry (doubling, with jitter)")
	fs.StringVar(&autoRoles, "auto-roles", "", "comma-separated role codes the community adds by itself (only for a server that does not announce them)")
	fs.BoolVar(&cfg.verbose, "v", false, "print every user's outcome")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s=... usersync -url URL -account ID -file PATH [flags]\n", apiKeyEnv)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected arguments %q (the file is given with -file)", fs.Args())
	case cfg.account == "":
		return cfg, errors.New("-account is required")
	case cfg.file == "":
		return cfg, errors.New("-file is required")
	case cfg.concurrency < 1:
		return cfg, errors.New("-concurrency must be at least 1")
	case cfg.retries < 0:
		return cfg, errors.New("-retries must not be negative")
	case cfg.timeout <= 0 || cfg.retryWait < 0:
		return cfg, errors.New("-timeout must be positive and -retry-wait not negative")
	}
	if autoRoles != "" {
		cfg.autoRoles = strings.Split(autoRoles, ",")
	}
	if cfg.format == "" {
		switch strings.ToLower(filepath.Ext(cfg.file)) {
		case ".csv":
			cfg.format = "csv"
		case ".jsonl", ".ndjson":
			cfg.format = "jsonl"
		default:
			return cfg, fmt.Errorf("cannot tell the format of %q from its extension: give -format csv or -format jsonl", cfg.file)
		}
	}
	if cfg.format != "csv" && cfg.format != "jsonl" {
		return cfg, fmt.Errorf("-format must be csv or jsonl (got %q)", cfg.format)
	}
	return cfg, nil
}

// readFile reads and decodes the export. An error is a file that cannot
// be opened; problems are what is wrong inside it.
func readFile(cfg config, stdin io.Reader) ([]row, *problems, error) {
	var r io.Reader = stdin
	name := "stdin"
	if cfg.file != "-" {
		f, err := os.Open(cfg.file)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		r, name = f, cfg.file
	}
	p := &problems{file: name}
	if cfg.format == "csv" {
		return readCSV(r, p), p, nil
	}
	return readJSONL(r, p), p, nil
}

// result is what happened to one row.
type result struct {
	done     bool
	outcome  userapi.Outcome
	plan     userapi.Plan // in a dry run
	err      error
	attempts int
}

// syncer syncs the rows.
type syncer struct {
	cfg     config
	client  *userapi.Client
	rows    []row
	results []result
	done    atomic.Int64
	authErr atomic.Bool
	// noLookup is set when a dry run found that the server cannot look a
	// user up by id: its plans by id stay unsettled.
	noLookup atomic.Bool
}

// run syncs every row, at most cfg.concurrency at once. A row's failure
// does not stop the others, except a failed authentication, which no
// other row can pass either.
func (s *syncer) run(ctx context.Context, stderr io.Writer) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopBar := s.progress(stderr)
	defer stopBar()
	var g errgroup.Group
	g.SetLimit(s.cfg.concurrency)
	for i := range s.rows {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			s.results[i] = s.one(ctx, s.rows[i])
			s.done.Add(1)
			if errors.Is(s.results[i].err, auth.ErrUnauthenticated) {
				s.authErr.Store(true)
				cancel()
			}
			return nil
		})
	}
	_ = g.Wait() // every goroutine returns nil: failures are per row
}

// one syncs (or plans) one row, retrying network failures and 5xx answers
// with exponential backoff and jitter.
func (s *syncer) one(ctx context.Context, r row) result {
	res := result{done: true}
	for {
		res.attempts++
		var err error
		if s.cfg.dryRun {
			res.plan, err = s.client.Plan(ctx, r.in)
			if err == nil && res.plan.ByID() && !s.noLookup.Load() {
				// The username is unknown and the row has an id: ask the
				// server whether the id is a user's, so that the report
				// says create or update.
				res.plan, err = s.client.Resolve(ctx, res.plan)
				if errors.Is(err, userapi.ErrNoIDLookup) {
					s.noLookup.Store(true)
					err = nil
				}
			}
			res.outcome = res.plan.Outcome
		} else {
			res.outcome, _, err = s.client.Sync(ctx, r.in)
		}
		res.err = err
		if err == nil || !userapi.Retryable(err) || res.attempts > s.cfg.retries || ctx.Err() != nil {
			return res
		}
		wait := backoff(s.cfg.retryWait, res.attempts)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return res
		case <-t.C:
		}
	}
}

// backoff is the wait before retry n (1-based): base doubled n-1 times,
// capped at 30s, with "equal jitter" (half fixed, half random) so that
// many clients do not retry in step.
func backoff(base time.Duration, n int) time.Duration {
	d := base << min(n-1, 16)
	if d > 30*time.Second || d <= 0 {
		d = 30 * time.Second
	}
	half := d / 2
	return half + rand.N(half+1)
}

// progress draws a progress bar on stderr while rows are synced, when
// stderr is a terminal. It returns the function that stops it.
func (s *syncer) progress(stderr io.Writer) (stop func()) {
	f, ok := stderr.(*os.File)
	if !ok {
		return func() {}
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return func() {}
	}
	total := len(s.rows)
	draw := func() {
		n := int(s.done.Load())
		const width = 40
		filled := 0
		if total > 0 {
			filled = n * width / total
		}
		fmt.Fprintf(f, "\r[%s%s] %d/%d", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), n, total)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				draw()
				fmt.Fprintln(f)
				return
			case <-tick.C:
				draw()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// report prints the per-user lines and the summary, and returns the exit
// status.
func (s *syncer) report(w io.Writer, file string) int {
	var created, updated, either, unchanged, failed int
	var failures []string
	for i, res := range s.results {
		r := s.rows[i]
		at := fmt.Sprintf("%s:%d: %s", file, r.line, *r.in.Username)
		switch {
		case !res.done:
			failed++
			reason := "not attempted: the run was cancelled"
			if s.authErr.Load() {
				reason = "not attempted: authentication failed"
			}
			failures = append(failures, at+": "+reason)
			continue
		case res.err != nil:
			failed++
			msg := res.err.Error()
			if res.attempts > 1 {
				msg += fmt.Sprintf(" (after %d attempts)", res.attempts)
			}
			failures = append(failures, at+": "+msg)
			continue
		}
		switch {
		case s.cfg.dryRun && res.outcome == userapi.Updated && res.plan.ByID():
			// The username is unknown and the row has an id, and the
			// server has no lookup by id (Resolve): only the write would
			// tell a rename from a create. Count it as neither.
			either++
		case res.outcome == userapi.Created:
			created++
		case res.outcome == userapi.Updated:
			updated++
		default:
			unchanged++
		}
		switch {
		case s.cfg.dryRun && res.outcome != userapi.Unchanged:
			fmt.Fprintf(w, "%s: would %s (%s)\n", at, describePlan(res.plan), strings.Join(res.plan.Changes, ", "))
		case s.cfg.dryRun && s.cfg.verbose:
			fmt.Fprintf(w, "%s: unchanged\n", at)
		case s.cfg.verbose:
			fmt.Fprintf(w, "%s: %s\n", at, res.outcome)
		}
	}
	if len(failures) > 0 {
		fmt.Fprintln(w, "failed:")
		for _, f := range failures {
			fmt.Fprintln(w, "  "+f)
		}
	}
	verb := ""
	if s.cfg.dryRun {
		verb = "dry run, nothing written: would be "
	}
	eitherNote := ""
	if either > 0 {
		eitherNote = fmt.Sprintf(", created or updated by id %d (the server has no lookup by id: no SCIM endpoint at /scim/v2)", either)
	}
	fmt.Fprintf(w, "%screated %d, updated %d%s, unchanged %d, failed %d (of %d users)\n", verb, created, updated, eitherNote, unchanged, failed, len(s.rows))
	if s.authErr.Load() {
		fmt.Fprintf(w, "authentication failed: check -account and %s (and the account's IP allowlist)\n", apiKeyEnv)
	}
	if failed > 0 {
		return 1
	}
	return 0
}

func describePlan(p userapi.Plan) string {
	switch {
	case p.Outcome == userapi.Created:
		return "create"
	case p.ByID():
		return "update id " + *p.Input.ID + " to this username, or create it if the id is unknown"
	case p.Current != nil && p.Input.Username != nil && p.Current.Username != *p.Input.Username:
		return fmt.Sprintf("update user %s, renaming %q", p.Current.ID, p.Current.Username)
	}
	return "update"
}
