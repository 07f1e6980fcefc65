package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgres is a throwaway PostgreSQL server for one harness run, set up
// the way the tests' internal/pgtest does it (that package is test-only,
// so the harness has its own small starter): initdb into a fresh
// directory, trust authentication on 127.0.0.1 only, no Unix socket,
// durability off (fsync, synchronous_commit, full_page_writes) unless
// -postgres-durable asks for PostgreSQL's own. As root it runs as the
// "postgres" OS user, since PostgreSQL refuses root.
type postgres struct {
	bin  string
	dir  string
	cred *syscall.Credential
	DSN  string
}

// pgBinDir finds initdb, pg_ctl and postgres: on PATH, else in the newest
// /usr/lib/postgresql/VERSION/bin (Debian's layout).
func pgBinDir() (string, error) {
	var dirs []string
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	versions, _ := filepath.Glob("/usr/lib/postgresql/*/bin") // a bad pattern is impossible here
	sort.Slice(versions, func(i, j int) bool { return pgVersion(versions[i]) > pgVersion(versions[j]) })
	dirs = append(dirs, versions...)
	for _, d := range dirs {
		ok := true
		for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
			if fi, err := os.Stat(filepath.Join(d, b)); err != nil || fi.Mode()&0o111 == 0 {
				ok = false
			}
		}
		if ok {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, pg_ctl, postgres) on PATH or in /usr/lib/postgresql/*/bin: install them (Debian: apt-get install -y postgresql) or pass -postgres-dsn")
}

func pgVersion(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir))) // not a number sorts last
	return n
}

// startPostgres initialises and starts a server on a free port, in a new
// directory under the system's temporary directory (which the postgres
// user can reach, unlike a directory of root's); stop removes it. A
// non-nil server is returned with an error when it started but failed
// later, so that the caller can stop it. durable keeps PostgreSQL's
// durability settings (a commit waits for its WAL flush, as in a
// deployment: bench/README.md, "Session 21", measured the writer with
// both); otherwise they are off for speed.
func startPostgres(ctx context.Context, durable bool) (*postgres, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "procure-bench-pg-")
	if err != nil {
		return nil, err
	}
	pg := &postgres{bin: bin, dir: dir}
	started := false
	defer func() {
		if !started {
			_ = os.RemoveAll(dir) // best effort: nothing runs in it
		}
	}()
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root, which PostgreSQL refuses, and there is no \"postgres\" OS user to run it as: %w", err)
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("postgres OS user: %w", err)
		}
		pg.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{uint32(gid)}}
		if err := os.Chown(pg.dir, int(uid), int(gid)); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(pg.dir, "data")
	if out, err := pg.run(ctx, "initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	safety := `
# Not durable: never use for real data.
fsync = off
synchronous_commit = off
full_page_writes = off`
	if durable {
		safety = `
# PostgreSQL's own durability (fsync, synchronous_commit, full_page_writes on).`
	}
	conf := fmt.Sprintf(`
# bench/cmd/loadtest: a throwaway server.%s
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = ''
max_connections = 200
shared_buffers = '512MB'
max_wal_size = '2GB'
logging_collector = off
`, safety, port)
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_, werr := f.WriteString(conf)
	if err := errors.Join(werr, f.Close()); err != nil {
		return nil, err
	}
	logPath := filepath.Join(pg.dir, "postgres.log")
	if out, err := pg.run(ctx, "pg_ctl", "start", "-w", "-t", "120", "-D", data, "-l", logPath); err != nil {
		log, _ := os.ReadFile(logPath) // for the message only
		// A start that timed out may have left a server behind.
		_, _ = pg.run(context.Background(), "pg_ctl", "stop", "-m", "immediate", "-w", "-D", data) // best effort
		return nil, fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, clip(log))
	}
	started = true
	pg.DSN = "postgres://postgres@127.0.0.1:" + strconv.Itoa(port) + "/postgres?sslmode=disable"
	// pg_ctl -w waited for the server to accept connections; one query
	// makes sure the DSN works.
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, pg.DSN)
	if err == nil {
		err = conn.Ping(cctx)
		conn.Close(cctx)
	}
	if err != nil {
		return pg, fmt.Errorf("postgres started but does not answer: %w", err)
	}
	return pg, nil
}

// durability names the database's durability settings for the report:
// fsync and synchronous_commit, which decide whether a commit waits for
// its WAL flush (the writer's rate depends on it: bench/README.md,
// "Session 21"). One simple-protocol query, so that it also works
// through a pooler in transaction mode.
func durability(ctx context.Context, dsn string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, dsn)
	if err != nil {
		return "", fmt.Errorf("reading the database's durability settings: %w", err)
	}
	defer conn.Close(cctx)
	var fsync, commit string
	if err := conn.QueryRow(cctx, "SELECT current_setting('fsync'), current_setting('synchronous_commit')", pgx.QueryExecModeSimpleProtocol).Scan(&fsync, &commit); err != nil {
		return "", fmt.Errorf("reading the database's durability settings: %w", err)
	}
	return "fsync " + fsync + ", synchronous_commit " + commit, nil
}

// stop shuts the server down at once and removes its directory: the data
// is thrown away.
func (pg *postgres) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var err error
	if out, serr := pg.run(ctx, "pg_ctl", "stop", "-m", "immediate", "-w", "-D", filepath.Join(pg.dir, "data")); serr != nil {
		err = fmt.Errorf("pg_ctl stop: %w\n%s", serr, out)
	}
	return errors.Join(err, os.RemoveAll(pg.dir))
}

func (pg *postgres) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(pg.bin, name), args...)
	cmd.Dir = pg.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	if pg.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pg.cred}
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	return out.Bytes(), err
}

// startBouncer starts PgBouncer in transaction mode on a free port in
// front of pg (in pg's directory, as pg's OS user: PgBouncer refuses root
// too) and returns the URL of pg's database through it. pg.stop's
// removal of the directory does not stop it: stopBouncer does.
func (pg *postgres) startBouncer(ctx context.Context) (string, error) {
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		bin = "/usr/sbin/pgbouncer" // Debian's, not on every PATH
		if _, err := os.Stat(bin); err != nil {
			return "", errors.New("no pgbouncer on PATH or in /usr/sbin: install it (Debian: apt-get install -y pgbouncer)")
		}
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	target := strings.TrimPrefix(pg.DSN, "postgres://postgres@127.0.0.1:")
	target = target[:strings.IndexByte(target, '/')]
	conf := fmt.Sprintf(`; bench/cmd/loadtest: PgBouncer in transaction mode in front of the throwaway server.
[databases]
* = host=127.0.0.1 port=%s user=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = any
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 20
logfile = %s
pidfile = %s
`, target, port, filepath.Join(pg.dir, "pgbouncer.log"), filepath.Join(pg.dir, "pgbouncer.pid"))
	ini := filepath.Join(pg.dir, "pgbouncer.ini")
	if err := os.WriteFile(ini, []byte(conf), 0o644); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, bin, "-d", ini)
	cmd.Dir = pg.dir
	if pg.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pg.cred}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(pg.dir, "pgbouncer.log")) // for the message only
		return "", fmt.Errorf("pgbouncer: %w\n%s\n%s", err, out, clip(log))
	}
	dsn := "postgres://postgres@127.0.0.1:" + strconv.Itoa(port) + "/postgres?sslmode=disable"
	for deadline := time.Now().Add(30 * time.Second); ; {
		conn, err := pgx.Connect(ctx, dsn)
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		if err == nil {
			return dsn, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("pgbouncer started but does not answer: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stopBouncer stops the PgBouncer startBouncer started, if it runs.
func (pg *postgres) stopBouncer() error {
	b, err := os.ReadFile(filepath.Join(pg.dir, "pgbouncer.pid"))
	if err != nil {
		return nil // never started
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return err
	}
	_ = syscall.Kill(pid, syscall.SIGTERM) // gone already is fine
	for range 50 {
		if syscall.Kill(pid, 0) != nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("pgbouncer (pid %d) did not stop", pid)
}
