package pgtest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func connect(tb testing.TB, dsn string) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Two databases of one test binary live on one server but share nothing: a
// table made in one does not exist in the other.
func TestNewDatabaseIsolated(t *testing.T) {
	ctx := context.Background()
	dsnA, dsnB := NewDatabase(t), NewDatabase(t)
	if dsnA == dsnB {
		t.Fatalf("NewDatabase returned the same DSN twice: %s", dsnA)
	}
	a, b := connect(t, dsnA), connect(t, dsnB)

	var nameA, nameB string
	if err := a.QueryRow(ctx, "SELECT current_database()").Scan(&nameA); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(ctx, "SELECT current_database()").Scan(&nameB); err != nil {
		t.Fatal(err)
	}
	if nameA == nameB {
		t.Fatalf("both DSNs open database %q", nameA)
	}

	if _, err := a.Exec(ctx, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := a.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("count in A = %d, %v; want 1", n, err)
	}
	var exists bool
	if err := b.QueryRow(ctx, "SELECT to_regclass('public.t') IS NOT NULL").Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Fatal("table t made in database A exists in database B")
	}
}

// Every database is UTF8 with the C locale, whatever the server's default,
// so that tests do not depend on the machine.
func TestNewDatabaseEncoding(t *testing.T) {
	conn := connect(t, NewDatabase(t))
	var enc, collate, ctype string
	err := conn.QueryRow(context.Background(),
		"SELECT pg_encoding_to_char(encoding), datcollate, datctype FROM pg_database WHERE datname = current_database()").
		Scan(&enc, &collate, &ctype)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := []string{enc, collate, ctype}, []string{"UTF8", "C", "C"}; !cmp.Equal(got, want) {
		t.Fatalf("encoding, collate, ctype = %v; want %v", got, want)
	}
}

// The database is dropped when the test that made it ends.
func TestNewDatabaseDroppedAtCleanup(t *testing.T) {
	var name string
	t.Run("inner", func(t *testing.T) {
		conn := connect(t, NewDatabase(t))
		if err := conn.QueryRow(context.Background(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	conn := connect(t, NewDatabase(t))
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("database %s still exists after its test ended", name)
	}
}

func TestDebianDirsNewestFirst(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"9.6", "13", "16", "15", "notaversion"} {
		if err := os.MkdirAll(filepath.Join(root, v, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		filepath.Join(root, "16", "bin"),
		filepath.Join(root, "15", "bin"),
		filepath.Join(root, "13", "bin"),
		filepath.Join(root, "9.6", "bin"),
	}
	if diff := cmp.Diff(want, debianDirs(root)); diff != "" {
		t.Fatalf("debianDirs (-want +got):\n%s", diff)
	}
	if got := debianDirs(filepath.Join(root, "missing")); len(got) != 0 {
		t.Fatalf("debianDirs of a missing directory = %v; want none", got)
	}
}

func TestWithDatabase(t *testing.T) {
	tests := []struct {
		name, dsn, want string
	}{
		{"url", "postgres://u:p@127.0.0.1:5432/postgres?sslmode=disable", "postgres://u:p@127.0.0.1:5432/db1?sslmode=disable"},
		{"url without database", "postgresql://u@host", "postgresql://u@host/db1"},
		{"keyword/value", "host=127.0.0.1 user=u dbname=postgres", "host=127.0.0.1 user=u dbname=postgres dbname=db1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := withDatabase(tt.dsn, "db1")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("withDatabase(%q) = %q; want %q", tt.dsn, got, tt.want)
			}
			if _, err := pgx.ParseConfig(got); err != nil {
				t.Fatalf("result does not parse: %v", err)
			}
		})
	}
}

// A directory left by a process that no longer exists is removed by the
// sweep; one whose owner is alive is kept.
func TestSweep(t *testing.T) {
	bin, err := findBinaries()
	if err != nil {
		t.Skip(err)
	}
	mk := func(pid int) string {
		dir, err := os.MkdirTemp("", dirPrefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(itoa(pid)), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dead := mk(deadPID(t))
	live := mk(os.Getpid())
	cred, err := credential()
	if err != nil {
		t.Skip(err)
	}
	sweep(bin, cred)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("directory of a dead owner still exists (stat: %v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("directory of a live owner was removed: %v", err)
	}
}

func TestServerStopStart(t *testing.T) {
	s := NewServer(t)
	ctx := context.Background()
	if err := execAdmin(ctx, s.DSN(), "CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	s.Stop(t)
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := ping(short, s.DSN()); err == nil {
		t.Fatal("the stopped server answers")
	}
	s.Start(t)
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != 7 {
		t.Fatalf("after a restart: %d, %v; want the data kept", v, err)
	}
	if !strings.Contains(s.DSN(), ":"+strconv.Itoa(s.port)+"/") {
		t.Errorf("DSN %s does not use port %d", s.DSN(), s.port)
	}
}

// A pooled database is the same database reached through PgBouncer in
// transaction mode: what one URL writes the other reads, and the pooled
// URL's port is not the server's.
func TestNewPooledDatabase(t *testing.T) {
	ctx := context.Background()
	pooled, direct := NewPooledDatabase(t)
	p, d := connect(t, pooled), connect(t, direct)
	if _, err := p.Exec(ctx, "CREATE TABLE t (v int); INSERT INTO t VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	var v, serverPort int
	if err := d.QueryRow(ctx, "SELECT v, inet_server_port() FROM t").Scan(&v, &serverPort); err != nil || v != 7 {
		t.Fatalf("the direct connection reads %d, %v; want 7", v, err)
	}
	if p.Config().Port == uint16(serverPort) {
		t.Fatalf("the pooled URL %s reaches the server's own port %d", pooled, serverPort)
	}
	// Transaction pooling: a transaction keeps its server connection.
	var pid1, pid2 int
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid1); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid2); err != nil || pid1 != pid2 {
		t.Fatalf("one transaction ran on backends %d and %d (%v)", pid1, pid2, err)
	}
}

// The replica follows the primary, and shows the data as it was while its
// replay is paused.
func TestNewReplicatedDatabase(t *testing.T) {
	ctx := context.Background()
	r := NewReplicatedDatabase(t)
	p, rep := connect(t, r.Primary), connect(t, r.Replica)
	var standby bool
	if err := rep.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&standby); err != nil || !standby {
		t.Fatalf("the replica: pg_is_in_recovery() = %v, %v; want true", standby, err)
	}
	if _, err := p.Exec(ctx, "CREATE TABLE t (v int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var n int
		if err := rep.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
			return -1 // the table has not reached the replica yet
		}
		return n
	}
	eventually := func(want int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for count() != want {
			if time.Now().After(deadline) {
				t.Fatalf("the replica has %d rows; want %d", count(), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	eventually(1)
	r.PauseReplay(t)
	if _, err := p.Exec(ctx, "INSERT INTO t VALUES (2)"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := count(); n != 1 {
		t.Fatalf("the paused replica has %d rows; want the 1 it had", n)
	}
	r.ResumeReplay(t)
	eventually(2)
}
