package pgtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a PostgreSQL server of one test alone, which the test may stop
// and start again (to see what a client does while the database is down).
// Its data survives a Stop; the server and its directory are removed when
// the test ends.
type Server struct {
	s    *server
	dsn  string // of the database "test"
	port int
}

// NewServer starts a new server for tb alone (initdb and a free loopback
// port: a few seconds) with one empty database, "test". It skips tb when
// PGSTORE_TEST_DSN names an existing server (a shared server must not be
// stopped) or when no PostgreSQL can be found, and fails it under CI=true
// in the latter case.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	if os.Getenv(EnvDSN) != "" {
		tb.Skipf("pgtest: %s is set; a test that stops its server needs one of its own", EnvDSN)
	}
	bin, err := findBinaries()
	if err != nil {
		if os.Getenv("CI") != "true" {
			tb.Skipf("pgtest: %v", err)
		}
		tb.Fatalf("pgtest: %v", err)
	}
	s, err := start(bin)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.stop(); err != nil && !errors.Is(err, os.ErrNotExist) {
			tb.Logf("pgtest: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := execAdmin(ctx, s.dsn, "CREATE DATABASE test TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	dsn, err := withDatabase(s.dsn, "test")
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	port, err := portOf(s.dsn)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return &Server{s: s, dsn: dsn, port: port}
}

// DSN is the URL of the server's database "test".
func (s *Server) DSN() string { return s.dsn }

// Stop stops the server (pg_ctl stop -m fast: every session is ended at
// once, transactions in flight roll back, and committed data is written
// out first) and waits until it has stopped. An immediate stop would
// lose commits: the test settings turn synchronous_commit off.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := s.s.run(ctx, "pg_ctl", "stop", "-m", "fast", "-w", "-D", s.s.data()); err != nil {
		tb.Fatalf("pgtest: pg_ctl stop: %v\n%s", err, out)
	}
}

// Start starts the stopped server again on the same port, with the same
// data, and waits until it accepts connections.
func (s *Server) Start(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	logFile := filepath.Join(s.s.dir, "postgres.log")
	if out, err := s.s.run(ctx, "pg_ctl", "start", "-w", "-t", "120", "-D", s.s.data(), "-l", logFile); err != nil {
		log, _ := os.ReadFile(logFile)
		tb.Fatalf("pgtest: pg_ctl start: %v\n%s\n%s", err, out, tail(log, 2000))
	}
	if err := waitReady(ctx, s.dsn); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
}

// portOf returns the port of a postgres:// URL made by start.
func portOf(dsn string) (int, error) {
	rest := dsn[strings.LastIndex(dsn, ":")+1:]
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	return strconv.Atoi(rest)
}
