// Package pgtest gives tests a real, throwaway PostgreSQL database.
//
// The first call to NewDatabase in a test binary starts one PostgreSQL
// server for the whole binary: initdb into a fresh temporary directory, a
// free port on 127.0.0.1, no Unix socket, and settings that trade
// durability for speed (fsync, synchronous_commit and full_page_writes off;
// never use them for real data). Each NewDatabase then creates a new empty
// database on it and drops it when the test ends. Main stops the server and
// removes its directory after the tests ran.
//
// The server binaries (initdb, pg_ctl, postgres) are taken from PATH, or
// else from the newest /usr/lib/postgresql/VERSION/bin, where Debian's
// postgresql package installs them. PostgreSQL refuses to run as root, so
// when the tests run as root the server runs as the "postgres" OS user.
//
// With PGSTORE_TEST_DSN set (a URL such as
// postgres://postgres@127.0.0.1:5432/postgres, for a role that may CREATE
// DATABASE), no server is started: databases are created on that server.
//
// When no PostgreSQL can be found the test is skipped with a message saying
// so, except under CI=true, where it fails: CI must run these tests.
//
// A server left behind by a test binary that was killed is stopped, and its
// directory removed, by the next binary that starts one.
//
// Every database is created from template0 with encoding UTF8 and the C
// locale, so the results of the tests do not depend on the server's
// defaults.
package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN names the environment variable that points the tests at an
// existing server instead of a throwaway one.
const EnvDSN = "PGSTORE_TEST_DSN"

// dirPrefix starts the name of every server directory, so that a later run
// can find and clean up the ones a killed run left behind.
const dirPrefix = "pgtest-"

// errNotFound is returned when no PostgreSQL server binaries exist here.
var errNotFound = errors.New("no PostgreSQL server binaries found (looked for initdb and pg_ctl on PATH and in /usr/lib/postgresql/*/bin); install PostgreSQL (Debian: apt-get install postgresql) or set " + EnvDSN + " to a server's URL")

var (
	once    sync.Once
	admin   string // DSN of the maintenance database of the server in use
	srv     *server
	srvErr  error
	counter atomic.Int64
)

// Main runs the tests of m and then stops the server started for this test
// binary, if one was started, and removes its directory. Use it from
// TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	if bouncerDir != "" {
		stopBouncer(bouncerDir)
		if srv == nil {
			_ = os.RemoveAll(bouncerDir)
		}
	}
	if replicaSrv != nil {
		if err := replicaSrv.stopServer(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: replica: %v\n", err)
		}
	}
	if srv != nil {
		if err := srv.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		}
	}
	return code
}

// NewDatabase creates a new empty database and returns its URL
// (postgres://...). The database is dropped when tb and its subtests end
// (best effort). It skips tb when no PostgreSQL can be found, or fails it
// under CI=true.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	once.Do(func() { admin, srv, srvErr = setup() })
	if srvErr != nil {
		if errors.Is(srvErr, errNotFound) && os.Getenv("CI") != "true" {
			tb.Skipf("pgtest: %v", srvErr)
		}
		tb.Fatalf("pgtest: %v", srvErr)
	}

	name := fmt.Sprintf("pgtest_%d_%d_%s", os.Getpid(), counter.Add(1), randomHex(4))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := execAdmin(ctx, admin, "CREATE DATABASE "+name+" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// FORCE ends sessions a test left open (PostgreSQL 13 and later).
		err := execAdmin(ctx, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		if err != nil {
			err = execAdmin(ctx, admin, "DROP DATABASE IF EXISTS "+name)
		}
		if err != nil {
			tb.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	dsn, err := withDatabase(admin, name)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return dsn
}

// setup returns the maintenance DSN of the server to use, starting one
// when PGSTORE_TEST_DSN is not set.
func setup() (string, *server, error) {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := ping(ctx, dsn); err != nil {
			return "", nil, fmt.Errorf("%s: cannot connect: %w", EnvDSN, err)
		}
		return dsn, nil, nil
	}
	bin, err := findBinaries()
	if err != nil {
		return "", nil, err
	}
	s, err := start(bin)
	if err != nil {
		return "", nil, err
	}
	return s.dsn, s, nil
}

// findBinaries returns the directory that holds initdb, pg_ctl and
// postgres: PATH first, then Debian's versioned directories, newest first.
func findBinaries() (string, error) {
	var dirs []string
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
		if real, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append(dirs, filepath.Dir(real))
		}
	}
	dirs = append(dirs, debianDirs("/usr/lib/postgresql")...)
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "pg_ctl")) && isExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errNotFound
}

// debianDirs lists root/VERSION/bin, the highest version first.
func debianDirs(root string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	type dir struct {
		version []int
		path    string
	}
	var found []dir
	for _, e := range entries {
		var v []int
		for part := range strings.SplitSeq(e.Name(), ".") {
			n, err := strconv.Atoi(part)
			if err != nil {
				v = nil
				break
			}
			v = append(v, n)
		}
		if v != nil {
			found = append(found, dir{v, filepath.Join(root, e.Name(), "bin")})
		}
	}
	slices.SortFunc(found, func(a, b dir) int { return -slices.Compare(a.version, b.version) })
	out := make([]string, len(found))
	for i, d := range found {
		out[i] = d.path
	}
	return out
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// server is a PostgreSQL server started by this package.
type server struct {
	bin  string              // directory of the server binaries
	dir  string              // the temporary directory: data/, log, owner
	cred *syscall.Credential // who runs the server; nil: this process's user
	dsn  string
}

func (s *server) data() string { return filepath.Join(s.dir, "data") }

// start creates a cluster in a new temporary directory and starts it on a
// free loopback port, retrying with another port if one is taken between
// choosing and binding it.
func start(bin string) (*server, error) {
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	sweep(bin, cred)

	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, err
	}
	s := &server{bin: bin, dir: dir, cred: cred}
	fail := func(err error) (*server, error) {
		if rmErr := os.RemoveAll(dir); rmErr != nil {
			err = fmt.Errorf("%w (and removing %s: %v)", err, dir, rmErr)
		}
		return nil, err
	}
	// The owner file lets a later run tell that this directory was left
	// by a process that no longer exists.
	if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fail(err)
	}
	if cred != nil {
		// MkdirTemp makes the directory 0700 for this user; the server's
		// user must own it.
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(fmt.Errorf("chown %s to the postgres user: %w", dir, err))
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := s.run(ctx, "initdb", "-D", s.data(), "-A", "trust", "-U", "postgres",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"); err != nil {
		return fail(fmt.Errorf("initdb: %w\n%s", err, out))
	}

	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return fail(err)
		}
		if err := s.configure(port); err != nil {
			return fail(err)
		}
		logFile := filepath.Join(dir, "postgres.log")
		out, err := s.run(ctx, "pg_ctl", "start", "-w", "-t", "120", "-D", s.data(), "-l", logFile)
		if err != nil {
			log, _ := os.ReadFile(logFile)
			lastErr = fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, tail(log, 2000))
			continue
		}
		s.dsn = "postgres://postgres@127.0.0.1:" + strconv.Itoa(port) + "/postgres?sslmode=disable"
		if err := waitReady(ctx, s.dsn); err != nil {
			lastErr = err
			_ = s.stopServer()
			continue
		}
		return s, nil
	}
	return fail(lastErr)
}

// configure writes the test settings: later lines of postgresql.conf win,
// so a retry with another port simply appends again. wal_level replica and
// the WAL senders (PostgreSQL's defaults, stated here) let replica.go
// stream a replica from the server.
func (s *server) configure(port int) error {
	conf := fmt.Sprintf(`
# pgtest: a throwaway server for tests. Not durable: never use for real data.
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = ''
fsync = off
synchronous_commit = off
full_page_writes = off
# commits reach a replica within milliseconds, as with synchronous_commit on
wal_writer_delay = '10ms'
max_connections = 200
max_wal_size = '1GB'
shared_buffers = '512MB'
maintenance_work_mem = '256MB'
work_mem = '16MB'
logging_collector = off
wal_level = replica
max_wal_senders = 10
`, port)
	return appendConf(s.data(), conf)
}

// stop shuts the server down at once (its data is thrown away anyway) and
// removes its directory.
func (s *server) stop() error {
	err := s.stopServer()
	if rmErr := os.RemoveAll(s.dir); rmErr != nil {
		err = errors.Join(err, rmErr)
	}
	return err
}

func (s *server) stopServer() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := s.run(ctx, "pg_ctl", "stop", "-m", "immediate", "-w", "-D", s.data()); err != nil {
		return fmt.Errorf("pg_ctl stop: %w\n%s", err, out)
	}
	return nil
}

// run runs one of the server binaries as the server's user.
func (s *server) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return runAs(ctx, s.cred, s.dir, filepath.Join(s.bin, name), args...)
}

func runAs(ctx context.Context, cred *syscall.Credential, dir, path string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	// A fixed locale keeps initdb's and the server's messages and
	// defaults independent of the caller's environment.
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	// pg_ctl start leaves the server running with our pipes as its
	// output unless -l redirects it; WaitDelay keeps a stray holder from
	// blocking us forever.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	return out.Bytes(), err
}

// credential returns the postgres OS user to run the server as when this
// process is root, and nil otherwise.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, and PostgreSQL refuses to: no \"postgres\" OS user to run the server as (%v); create one or run the tests as another user", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("postgres user: uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("postgres user: gid %q: %w", u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{uint32(gid)}}, nil
}

// sweep stops and removes the servers of test binaries that died without
// running Main (killed, or timed out), so that they do not pile up.
func sweep(bin string, cred *syscall.Credential) {
	matches, err := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	if err != nil {
		return
	}
	for _, dir := range matches {
		b, err := os.ReadFile(filepath.Join(dir, "owner"))
		if err != nil {
			continue // not ours, or still being set up
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || alive(pid) {
			continue
		}
		stopBouncer(dir)
		// The replica (replica.go) first, then the primary.
		for _, data := range []string{filepath.Join(dir, "replica", "data"), filepath.Join(dir, "data")} {
			if _, err := os.Stat(filepath.Join(data, "postmaster.pid")); err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				_, _ = runAs(ctx, cred, dir, filepath.Join(bin, "pg_ctl"), "stop", "-m", "immediate", "-w", "-D", data) // best effort: it may be gone already
				cancel()
			}
		}
		_ = os.RemoveAll(dir) // best effort: another run may be sweeping too
	}
}

// alive reports whether a process with that pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// freePort asks the kernel for a free TCP port on the loopback address.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// waitReady waits until the server accepts connections.
func waitReady(ctx context.Context, dsn string) error {
	var err error
	for {
		if err = ping(ctx, dsn); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server did not accept connections: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func ping(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.Ping(ctx)
}

func execAdmin(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase returns dsn with its database replaced by name. It accepts
// both URL and keyword/value DSNs.
func withDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("%s: %w", EnvDSN, err)
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	return dsn + " dbname=" + name, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
