package storemetrics_test

import (
	"errors"
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
