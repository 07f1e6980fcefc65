package pgstore_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/internal/syncbuf"
	"github.com/procurekit/procure/pgstore"
)

// Issue 10 part 6: with WithLogger, Open logs each migration it applies
// and the schema version it ends at; a second Open applies and logs none.
func TestOpenLogsMigrations(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	for run, wantApplied := range []int{latestVersion, 0} {
		var logs syncbuf.Buffer
		s, err := pgstore.Open(ctx, dsn, pgstore.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		text := logs.String()
		if got := strings.Count(text, `msg="migration applied"`); got != wantApplied {
			t.Errorf("run %d: %d migrations logged; want %d:\n%s", run, got, wantApplied, text)
		}
		if wantApplied > 0 && !strings.Contains(text, "name=0001_init.sql") {
			t.Errorf("run %d: the first migration is not named:\n%s", run, text)
		}
		want := "msg=schema version=" + strconv.Itoa(latestVersion) + " migrations_applied=" + strconv.Itoa(wantApplied)
		if !strings.Contains(text, want) {
			t.Errorf("run %d: the log has no %q:\n%s", run, want, text)
		}
		if strings.Contains(text, "password") || strings.Contains(text, dsn) {
			t.Errorf("run %d: the log shows the DSN:\n%s", run, text)
		}
	}
}
