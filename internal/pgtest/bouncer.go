package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// PgBouncer in front of the test server, in transaction mode: how an
// operator with many nodes runs PostgreSQL, and the set-up in which a
// store must keep no session state outside a transaction (each
// transaction may get another server connection).

var (
	bouncerOnce sync.Once
	bouncerDSN  string // the maintenance database through PgBouncer
	bouncerDir  string // PgBouncer's config, log and pid file
	bouncerErr  error
)

// errNoBouncer is returned when PgBouncer cannot be found.
var errNoBouncer = errors.New("no pgbouncer found (looked on PATH and in /usr/sbin); install it (Debian: apt-get install pgbouncer)")

// NewPooledDatabase creates a new empty database, as NewDatabase does, and
// returns its URL through PgBouncer in transaction mode (pool_mode =
// transaction) and its direct URL, for what must not go through a pooler
// (a test's own inspection, migrations when a test says so). One PgBouncer
// serves the whole test binary, in front of its server; Main stops it.
//
// It skips tb when PostgreSQL or PgBouncer cannot be found, and fails it
// under CI=true.
func NewPooledDatabase(tb testing.TB) (pooled, direct string) {
	tb.Helper()
	direct = NewDatabase(tb)
	return throughBouncer(tb, direct), direct
}

// Pooled returns the URL of the replicated database's primary through
// PgBouncer in transaction mode, as NewPooledDatabase does.
func (r *Replicated) Pooled(tb testing.TB) string {
	tb.Helper()
	return throughBouncer(tb, r.Primary)
}

// throughBouncer returns the URL of the database at direct (a URL
// NewDatabase made) through the test binary's PgBouncer, starting it at
// the first call.
func throughBouncer(tb testing.TB, direct string) string {
	tb.Helper()
	bouncerOnce.Do(func() { bouncerDSN, bouncerErr = startBouncer() })
	if bouncerErr != nil {
		if errors.Is(bouncerErr, errNoBouncer) && os.Getenv("CI") != "true" {
			tb.Skipf("pgtest: %v", bouncerErr)
		}
		tb.Fatalf("pgtest: %v", bouncerErr)
	}
	u, err := url.Parse(direct)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	pooled, err := withDatabase(bouncerDSN, strings.TrimPrefix(u.Path, "/"))
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return pooled
}

// findBouncer returns the path of the pgbouncer binary (Debian installs
// it in /usr/sbin, which is not on every user's PATH).
func findBouncer() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	if p := "/usr/sbin/pgbouncer"; isExecutable(p) {
		return p, nil
	}
	return "", errNoBouncer
}

// startBouncer starts PgBouncer on a free loopback port in front of the
// server that NewDatabase uses, and returns the URL of that server's
// maintenance database through it. Its "*" entry forwards every database
// name to the server, as the server's maintenance user.
func startBouncer() (string, error) {
	bin, err := findBouncer()
	if err != nil {
		return "", err
	}
	target, err := url.Parse(admin)
	if err != nil {
		return "", err
	}
	cred, err := credential()
	if err != nil {
		return "", err
	}
	dir := ""
	if srv != nil {
		dir = srv.dir
	} else {
		// A shared server (PGSTORE_TEST_DSN): a directory of PgBouncer's
		// own, swept like a server's.
		if dir, err = os.MkdirTemp("", dirPrefix); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			return "", err
		}
		if cred != nil {
			if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
				return "", err
			}
		}
	}
	server := "host=" + target.Hostname() + " port=" + target.Port() + " user=" + target.User.Username()
	if pw, ok := target.User.Password(); ok {
		server += " password=" + pw
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return "", err
		}
		conf := fmt.Sprintf(`; pgtest: PgBouncer in transaction mode in front of the test server.
[databases]
* = %s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = any
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 10
server_idle_timeout = 10
logfile = %s
pidfile = %s
`, server, port, filepath.Join(dir, "pgbouncer.log"), filepath.Join(dir, "pgbouncer.pid"))
		ini := filepath.Join(dir, "pgbouncer.ini")
		if err := os.WriteFile(ini, []byte(conf), 0o644); err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		// -d: a daemon, stopped through its pid file (Main, or sweep when
		// this binary dies first).
		out, err := runAs(ctx, cred, dir, bin, "-d", ini)
		if err != nil {
			cancel()
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			lastErr = fmt.Errorf("pgbouncer: %w\n%s\n%s", err, out, tail(log, 2000))
			continue
		}
		bouncerDir = dir
		dsn := *target
		dsn.Host = "127.0.0.1:" + strconv.Itoa(port)
		err = waitReady(ctx, dsn.String())
		cancel()
		if err != nil {
			stopBouncer(dir)
			lastErr = err
			continue
		}
		return dsn.String(), nil
	}
	return "", lastErr
}

// stopBouncer stops the PgBouncer whose pid file is in dir, if it runs.
func stopBouncer(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "pgbouncer.pid"))
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return
	}
	// The pid may have been reused after a crash: only a pgbouncer is
	// signalled.
	if comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err != nil || strings.TrimSpace(string(comm)) != "pgbouncer" {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for range 50 {
		if !alive(pid) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
