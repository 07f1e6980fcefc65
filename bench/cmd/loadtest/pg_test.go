package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The throwaway server starts on 127.0.0.1, answers queries with the
// settings the harness asks for, and stops.
func TestStartPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	if _, err := pgBinDir(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pg, err := startPostgres(ctx)
	if pg != nil {
		t.Cleanup(func() {
			if err := pg.stop(); err != nil {
				t.Error(err)
			}
			if _, err := os.Stat(pg.dir); !os.IsNotExist(err) {
				t.Errorf("stop left %s behind (%v)", pg.dir, err)
			}
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for setting, want := range map[string]string{"fsync": "off", "listen_addresses": "127.0.0.1", "server_encoding": "UTF8"} {
		var got string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", setting, got, want)
		}
	}
}
