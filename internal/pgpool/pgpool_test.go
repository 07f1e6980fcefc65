package pgpool

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// Named statements on a direct connection, unnamed ones through
// PgBouncer, and whatever the DSN names without connecting at all.
func TestConfig(t *testing.T) {
	ctx := context.Background()
	pooled, direct := pgtest.NewPooledDatabase(t)
	cases := []struct {
		name       string
		dsn        string
		want       pgx.QueryExecMode
		wantDirect bool
	}{
		{"direct", direct, pgx.QueryExecModeCacheStatement, true},
		{"through PgBouncer", pooled, pgx.QueryExecModeCacheDescribe, false},
		{"named in a URL", "postgres://u@127.0.0.1:1/x?default_query_exec_mode=exec", pgx.QueryExecModeExec, false},
		{"named in keywords", "host=127.0.0.1 port=1 dbname=x default_query_exec_mode=simple_protocol", pgx.QueryExecModeSimpleProtocol, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, isDirect, err := Config(ctx, c.dsn)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.ConnConfig.DefaultQueryExecMode; got != c.want || isDirect != c.wantDirect {
				t.Fatalf("mode %v, direct %v; want %v, %v", got, isDirect, c.want, c.wantDirect)
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

func TestNamesExecMode(t *testing.T) {
	for dsn, want := range map[string]bool{
		"postgres://h/db?default_query_exec_mode=exec":    true,
		"postgresql://h/db?sslmode=disable":               false,
		"host=h default_query_exec_mode=cache_describe":   true,
		"host=h dbname=default_query_exec_mode_is_a_name": false,
		"default_query_exec_mode = exec":                  true,
	} {
		if got := namesExecMode(dsn); got != want {
			t.Errorf("namesExecMode(%q) = %v; want %v", dsn, got, want)
		}
	}
}
