package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A streaming replica of the test server: a second server made with
// pg_basebackup -R, run as the same OS user, which replays the primary's
// WAL as it streams in. Its data lags the primary's by whatever the
// replay has not reached yet, which a test can make as long as it likes
// with PauseReplay.

var (
	replicaOnce  sync.Once
	replicaSrv   *server
	replicaAdmin string // the replica's maintenance database
	replicaErr   error
	replicaMu    sync.Mutex // PauseReplay and ResumeReplay
)

// Replicated is a database of the test server with a streaming replica.
type Replicated struct {
	// Primary is the database's URL on the primary server.
	Primary string
	// Replica is its URL on the replica (read-only: a hot standby).
	Replica string
}

// NewReplicatedDatabase creates a new empty database on the test server,
// as NewDatabase does, and returns its URLs on the server and on a
// streaming replica of it, once the replica has it. One replica serves the
// whole test binary (started at the first call: a base backup and a
// second server, a few seconds); Main stops it.
//
// It skips tb when PostgreSQL cannot be found (failing it under CI=true)
// and when PGSTORE_TEST_DSN names a server (whose replicas are not
// pgtest's to make).
func NewReplicatedDatabase(tb testing.TB) *Replicated {
	tb.Helper()
	primary := NewDatabase(tb)
	if srv == nil {
		tb.Skipf("pgtest: %s is set; replicas are made of pgtest's own server only", EnvDSN)
	}
	replicaOnce.Do(func() { replicaAdmin, replicaSrv, replicaErr = startReplica() })
	if replicaErr != nil {
		tb.Fatalf("pgtest: replica: %v", replicaErr)
	}
	u, err := url.Parse(primary)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	replica, err := withDatabase(replicaAdmin, strings.TrimPrefix(u.Path, "/"))
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := waitReady(ctx, replica); err != nil {
		tb.Fatalf("pgtest: the replica did not get the database: %v", err)
	}
	return &Replicated{Primary: primary, Replica: replica}
}

// PauseReplay pauses the replica's replay of the primary's WAL
// (pg_wal_replay_pause): from then on the replica shows the data as it
// was, however the primary changes, until ResumeReplay, or until tb ends.
// The replica is the test binary's: tests that pause it must not run in
// parallel with other tests that use it.
func (r *Replicated) PauseReplay(tb testing.TB) {
	tb.Helper()
	replicaMu.Lock()
	defer replicaMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, replicaAdmin)
	if err != nil {
		tb.Fatalf("pgtest: connect to the replica: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		tb.Fatalf("pgtest: pg_wal_replay_pause: %v", err)
	}
	// The pause takes effect between two records: wait until it has.
	for {
		var state string
		if err := conn.QueryRow(ctx, "SELECT pg_get_wal_replay_pause_state()").Scan(&state); err != nil {
			tb.Fatalf("pgtest: %v", err)
		}
		if state == "paused" {
			break
		}
		select {
		case <-ctx.Done():
			tb.Fatalf("pgtest: the replica's replay did not pause (%s)", state)
		case <-time.After(10 * time.Millisecond):
		}
	}
	tb.Cleanup(func() { r.ResumeReplay(tb) })
}

// ResumeReplay resumes the replica's replay (pg_wal_replay_resume).
func (r *Replicated) ResumeReplay(tb testing.TB) {
	tb.Helper()
	replicaMu.Lock()
	defer replicaMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, replicaAdmin)
	if err != nil {
		tb.Errorf("pgtest: connect to the replica: %v", err)
		return
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "SELECT pg_wal_replay_resume()"); err != nil {
		tb.Errorf("pgtest: pg_wal_replay_resume: %v", err)
	}
}

// startReplica makes a streaming replica of srv in srv's directory
// (replica/data) and starts it on a free port.
func startReplica() (string, *server, error) {
	rs := &server{bin: srv.bin, dir: filepath.Join(srv.dir, "replica"), cred: srv.cred}
	if err := os.Mkdir(rs.dir, 0o700); err != nil {
		return "", nil, err
	}
	if rs.cred != nil {
		if err := os.Chown(rs.dir, int(rs.cred.Uid), int(rs.cred.Gid)); err != nil {
			return "", nil, err
		}
	}
	port, err := portOf(srv.dsn)
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// -R writes the standby's primary_conninfo and standby.signal; -X
	// stream copies the WAL written during the backup; -C -S makes a
	// physical replication slot (-R names it too), so that the primary
	// keeps its WAL until the replica has it: without one, a burst of WAL
	// (the tests' CREATE DATABASE copies) past max_wal_size once recycled
	// a segment the replica had not received, and the replica waited for
	// it for ever ("requested WAL segment ... has already been removed").
	// pg_basebackup is a client program: it may be missing beside links
	// to the server binaries, but not where they point.
	basebackup := filepath.Join(srv.bin, "pg_basebackup")
	if real, err := filepath.EvalSymlinks(filepath.Join(srv.bin, "pg_ctl")); err == nil && !isExecutable(basebackup) {
		basebackup = filepath.Join(filepath.Dir(real), "pg_basebackup")
	}
	if out, err := runAs(ctx, rs.cred, rs.dir, basebackup, "-D", rs.data(), "-R", "-X", "stream", "-C", "-S", "pgtest_replica", "-c", "fast", "--no-sync",
		"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "postgres"); err != nil {
		return "", nil, fmt.Errorf("pg_basebackup: %w\n%s", err, out)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return "", nil, err
		}
		// The backup copied the primary's settings; later lines win.
		// hot_standby_feedback keeps the primary's vacuum from removing
		// rows a long read on the replica still sees (a cache load).
		if err := appendConf(rs.data(), fmt.Sprintf("\n# pgtest: the replica.\nport = %d\nshared_buffers = '128MB'\nhot_standby = on\nhot_standby_feedback = on\n", port)); err != nil {
			return "", nil, err
		}
		logFile := filepath.Join(rs.dir, "postgres.log")
		out, err := rs.run(ctx, "pg_ctl", "start", "-w", "-t", "120", "-D", rs.data(), "-l", logFile)
		if err != nil {
			log, _ := os.ReadFile(logFile)
			lastErr = fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, tail(log, 2000))
			continue
		}
		rs.dsn = "postgres://postgres@127.0.0.1:" + strconv.Itoa(port) + "/postgres?sslmode=disable"
		if err := waitReady(ctx, rs.dsn); err != nil {
			lastErr = err
			_ = rs.stopServer()
			continue
		}
		return rs.dsn, rs, nil
	}
	return "", nil, lastErr
}

// appendConf appends lines to the postgresql.conf of a data directory.
func appendConf(data, lines string) error {
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(lines); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
