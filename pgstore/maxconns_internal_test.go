package pgstore

import (
	"strings"
	"testing"

	"github.com/procurekit/procure/internal/pgtest"
)

// The pool's size: WithMaxConns, else the DSN's pool_max_conns, else
// WithDefaultMaxConns, else pgxpool's default (which a direct
// connection keeps).
func TestPoolSize(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	pgxDefault := openWith(t, dsn).pool.pool.Config().MaxConns
	if pgxDefault < 4 {
		t.Fatalf("pgxpool's default is %d; want at least 4", pgxDefault)
	}
	for _, c := range []struct {
		name string
		dsn  string
		opts []Option
		want int32
	}{
		{"a default of the program's own", dsn, []Option{WithDefaultMaxConns(pgxDefault + 5)}, pgxDefault + 5},
		{"the DSN names one", dsn + sep + "pool_max_conns=3", []Option{WithDefaultMaxConns(pgxDefault + 5)}, 3},
		{"WithMaxConns wins", dsn + sep + "pool_max_conns=3", []Option{WithMaxConns(7), WithDefaultMaxConns(pgxDefault + 5)}, 7},
		{"WithMaxConns without the DSN", dsn, []Option{WithDefaultMaxConns(pgxDefault + 5), WithMaxConns(6)}, 6},
		{"neither", dsn, nil, pgxDefault},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := openWith(t, c.dsn, c.opts...).pool.pool.Config().MaxConns; got != c.want {
				t.Errorf("MaxConns = %d; want %d", got, c.want)
			}
		})
	}
}
