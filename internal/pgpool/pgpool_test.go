package pgpool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/procurekit/procure/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// Named statements on a direct connection, unnamed ones through
// PgBouncer, and whatever the DSN names without connecting at all.
func TestConfig(t *testing.T) {
	ctx := context.Background()
	pooled, direct := pgtest.NewPooledDatabase(t)
	def, err := pgxpool.ParseConfig(direct)
	if err != nil {
		t.Fatal(err)
	}
	base := def.MaxConns // pgxpool's default
	cases := []struct {
		name       string
		dsn        string
		want       pgx.QueryExecMode
		wantDirect bool
		wantConns  int32
	}{
		{"direct", direct, pgx.QueryExecModeCacheStatement, true, base},
		{"through PgBouncer", pooled, pgx.QueryExecModeCacheDescribe, false, PoolerConns * base},
		{"through PgBouncer, pool size named", pooled + "&pool_max_conns=3", pgx.QueryExecModeCacheDescribe, false, 3},
		{"direct, pool size named", direct + "&pool_max_conns=3", pgx.QueryExecModeCacheStatement, true, 3},
		{"named in a URL", "postgres://u@127.0.0.1:1/x?default_query_exec_mode=exec", pgx.QueryExecModeExec, false, base},
		{"named in keywords", "host=127.0.0.1 port=1 dbname=x default_query_exec_mode=simple_protocol", pgx.QueryExecModeSimpleProtocol, false, base},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, isDirect, err := Config(ctx, c.dsn)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.ConnConfig.DefaultQueryExecMode; got != c.want || isDirect != c.wantDirect || cfg.MaxConns != c.wantConns {
				t.Fatalf("mode %v, direct %v, %d connections; want %v, %v, %d", got, isDirect, cfg.MaxConns, c.want, c.wantDirect, c.wantConns)
			}
		})
	}
	if _, _, err := Config(ctx, "postgres://user:s3cret@[::1"); !errors.Is(err, ErrDSN) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("a malformed URL: %v; want ErrDSN, without the password", err)
	}
	cfg, err := ParseConfig(direct)
	if err != nil || cfg.ConnConfig.DefaultQueryExecMode != pgx.QueryExecModeCacheDescribe {
		t.Fatalf("ParseConfig: %v, %v; want QueryExecModeCacheDescribe", cfg.ConnConfig.DefaultQueryExecMode, err)
	}
}

func TestNamesParam(t *testing.T) {
	for _, c := range []struct {
		dsn, name string
		want      bool
	}{
		{"postgres://h/db?default_query_exec_mode=exec", "default_query_exec_mode", true},
		{"postgresql://h/db?sslmode=disable", "default_query_exec_mode", false},
		{"host=h default_query_exec_mode=cache_describe", "default_query_exec_mode", true},
		{"host=h dbname=default_query_exec_mode_is_a_name", "default_query_exec_mode", false},
		{"default_query_exec_mode = exec", "default_query_exec_mode", true},
		{"postgres://h/db?pool_max_conns=8", "pool_max_conns", true},
		{"postgres://h/db?pool_max_conns=8", "default_query_exec_mode", false},
		{"host=h pool_max_conns=8", "pool_max_conns", true},
		{"host=h xpool_max_conns=8", "pool_max_conns", false},
	} {
		if got := NamesParam(c.dsn, c.name); got != c.want {
			t.Errorf("NamesParam(%q, %q) = %v; want %v", c.dsn, c.name, got, c.want)
		}
	}
}

// A Unix socket is the server's own when it is .s.PGSQL.<port> in one of
// the server's unix_socket_directories, through symbolic links; a
// pooler's socket (another port, or another directory) is not.
func TestOwnSocket(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path, dirs, port string
		want             bool
	}{
		{"/var/run/postgresql/.s.PGSQL.5432", "/var/run/postgresql", "5432", true},
		{"/var/run/postgresql/.s.PGSQL.5432", "/var/run/postgresql/", "5432", true},
		{"/tmp/.s.PGSQL.5432", "/var/run/postgresql, /tmp", "5432", true},
		{"/var/run/postgresql/.s.PGSQL.6432", "/var/run/postgresql", "5432", false}, // PgBouncer beside the server
		{"/var/run/pgbouncer/.s.PGSQL.5432", "/var/run/postgresql", "5432", false},  // PgBouncer in its own directory
		{"/var/run/postgresql/.s.PGSQL.5432", "", "5432", false},                    // the server has no socket
		{"/var/run/postgresql/.s.PGSQL.5432", "@abstract", "5432", false},
		{"/var/run/postgresql/other.sock", "/var/run/postgresql", "5432", false},
		{"", "/var/run/postgresql", "5432", false},
		{filepath.Join(link, ".s.PGSQL.5432"), dir, "5432", true}, // the client names the directory through a link
		{filepath.Join(dir, ".s.PGSQL.5432"), link, "5432", true}, // the server does
	}
	for _, c := range cases {
		if got := ownSocket(c.path, c.dirs, c.port); got != c.want {
			t.Errorf("ownSocket(%q, %q, %q) = %v, want %v", c.path, c.dirs, c.port, got, c.want)
		}
	}
}
