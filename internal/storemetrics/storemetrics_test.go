package storemetrics_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/procurekit/procure/internal/metricstest"
	"github.com/procurekit/procure/internal/storemetrics"
)

func TestWrites(t *testing.T) {
	reg := prometheus.NewRegistry()
	w, err := storemetrics.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	w.Since("PutSupplier", time.Now().Add(-2*time.Millisecond))
	w.Since("PutSupplier", time.Now())
	w.Since("CreateUser", time.Now())
	fams := metricstest.Gather(t, reg)
	for _, c := range []struct {
		op   string
		want float64
	}{{"PutSupplier", 2}, {"CreateUser", 1}} {
		if got, ok := fams.Value(t, storemetrics.Name, "op", c.op); !ok || got != c.want {
			t.Errorf("%s count = %v (present %v), want %v", c.op, got, ok, c.want)
		}
	}

	// A second store on the same registry is refused by name.
	var are prometheus.AlreadyRegisteredError
	if _, err := storemetrics.Register(reg); !errors.As(err, &are) {
		t.Errorf("second Register: %v, want AlreadyRegisteredError", err)
	}
	w.Unregister()
	if _, err := storemetrics.Register(reg); err != nil {
		t.Errorf("Register after Unregister: %v", err)
	}

	var none *storemetrics.Writes
	none.Since("PutSupplier", time.Now()) // a store without metrics
	none.Unregister()
}

// Imports: the running gauge while an import reads, the bytes read of
// the latest, its size, and the results by outcome.
func TestImports(t *testing.T) {
	var im storemetrics.Imports
	reg := prometheus.NewRegistry()
	if err := reg.Register(&im); err != nil {
		t.Fatal(err)
	}
	r, done := im.Start(strings.NewReader("0123456789"), 10)
	if _, err := io.CopyN(io.Discard, r, 4); err != nil {
		t.Fatal(err)
	}
	fams := metricstest.Gather(t, reg)
	expect := func(name string, want float64, labels ...string) {
		t.Helper()
		if got, ok := fams.Value(t, name, labels...); !ok || got != want {
			t.Errorf("%s%v = %v (present %v); want %v", name, labels, got, ok, want)
		}
	}
	expect("procure_import_running", 1)
	expect("procure_import_read_bytes", 4)
	expect("procure_import_size_bytes", 10)
	if got, _ := fams.Value(t, "procure_import_last_start_timestamp_seconds"); got < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("last start %v; want about now", got)
	}
	done(nil)
	_, done = im.Start(strings.NewReader("x"), -1)
	done(errors.New("truncated"))
	fams = metricstest.Gather(t, reg)
	expect("procure_import_running", 0)
	expect("procure_import_read_bytes", 0)
	expect("procure_import_size_bytes", 0)
	expect("procure_imports_total", 1, "result", "ok")
	expect("procure_imports_total", 1, "result", "failed")
}
