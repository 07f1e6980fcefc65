package main

import (
	"context"
	"errors"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/internal/cputime"
)

// The throwaway server starts on 127.0.0.1, answers queries with the
// settings the harness asks for (durability off unless -postgres-durable),
// names them for the report (durability), and stops.
func TestStartPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	if _, err := pgBinDir(); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		name    string
		durable bool
		on      string // fsync, synchronous_commit and full_page_writes
	}{
		{"durability off", false, "off"},
		{"durable", true, "on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			pg, err := startPostgres(ctx, tc.durable)
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
			for setting, want := range map[string]string{
				"fsync": tc.on, "synchronous_commit": tc.on, "full_page_writes": tc.on,
				"listen_addresses": "127.0.0.1", "server_encoding": "UTF8",
			} {
				var got string
				if err := conn.QueryRow(ctx, "SELECT current_setting($1)", setting).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("%s = %q, want %q", setting, got, want)
				}
			}
			d, err := durability(ctx, pg.DSN)
			if want := "fsync " + tc.on + ", synchronous_commit " + tc.on; err != nil || d != want {
				t.Errorf("durability = %q, %v; want %q", d, err, want)
			}

			// The report's figures of the server's processes count the
			// backend of this connection.
			root, err := pg.postmasterPID()
			if err != nil {
				t.Fatal(err)
			}
			var backend int
			if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
				t.Fatal(err)
			}
			pids, err := cputime.Family("/proc", root)
			if err != nil || !slices.Contains(pids, backend) || !slices.Contains(pids, root) {
				t.Errorf("cputime.Family = %v, %v; want the postmaster %d and the backend %d among them", pids, err, root, backend)
			}
			if os.Geteuid() != 0 || runtime.GOOS != "linux" {
				return // -postgres-realtime needs root, on Linux
			}
			// -postgres-realtime: the server's processes, and a backend
			// forked afterwards, run under SCHED_RR.
			if err := setRealtime(pids); errors.Is(err, syscall.EPERM) {
				// Root in a container, or in a control group with no
				// real-time budget (cpu.rt_runtime_us 0).
				t.Skipf("real-time priority not permitted here: %v", err)
			} else if err != nil {
				t.Fatal(err)
			}
			conn2, err := pgx.Connect(ctx, pg.DSN)
			if err != nil {
				t.Fatal(err)
			}
			defer conn2.Close(ctx)
			var later int
			if err := conn2.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&later); err != nil {
				t.Fatal(err)
			}
			for _, pid := range []int{root, backend, later} {
				if policy, prio := schedPolicy(t, pid); policy != 2 || prio != realtimePriority {
					t.Errorf("process %d: policy %d, priority %d; want SCHED_RR (2) at %d", pid, policy, prio, realtimePriority)
				}
			}
		})
	}
}

// PgBouncer starts in front of the throwaway server: the pooled URL
// reaches the server through another port; stopBouncer stops it.
func TestStartBouncer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and PgBouncer")
	}
	if _, err := pgBinDir(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pg, err := startPostgres(ctx, false)
	if pg != nil {
		t.Cleanup(func() { _ = pg.stop() })
	}
	if err != nil {
		t.Fatal(err)
	}
	dsn, err := pg.startBouncer(ctx)
	if err != nil {
		if os.Getenv("CI") != "true" && strings.Contains(err.Error(), "no pgbouncer") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	var port int
	if err := conn.QueryRow(ctx, "SELECT inet_server_port()").Scan(&port); err != nil {
		t.Fatal(err)
	}
	if conn.Config().Port == uint16(port) {
		t.Fatalf("the pooled URL reaches the server's own port %d", port)
	}
	conn.Close(ctx)
	if err := pg.stopBouncer(); err != nil {
		t.Fatal(err)
	}
	if _, err := pgx.Connect(ctx, dsn); err == nil {
		t.Fatal("PgBouncer still answers after stopBouncer")
	}
}

// schedPolicy reads a process's scheduling policy and real-time priority
// (fields 41 and 40 of /proc/PID/stat).
func schedPolicy(t *testing.T, pid int) (policy, prio int) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	rt, ok1 := cputime.StatField(b, 40)
	pol, ok2 := cputime.StatField(b, 41)
	if !ok1 || !ok2 {
		t.Fatalf("/proc/%d/stat has no fields 40 and 41: %q", pid, b)
	}
	prio, err1 := strconv.Atoi(rt)
	policy, err2 := strconv.Atoi(pol)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %v %v", pid, err1, err2)
	}
	return policy, prio
}
