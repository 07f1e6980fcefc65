package memstore

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/procurekit/procure/internal/storemetrics"
)

// metrics is what RegisterMetrics sets: nil until then.
type metrics struct {
	writes  atomic.Pointer[storemetrics.Writes]
	imports storemetrics.Imports // counted always, collected once registered
}

// RegisterMetrics registers the store's metrics on reg (docs:
// operations.md "Metrics"): the latency of every write method, as
// procure_store_write_duration_seconds by op, and the progress and
// results of ImportStream (procure_import_*), the families and labels
// pgstore.WithMetrics registers. It may be called while the store
// serves; writes are timed from then on. reg is the caller's own registry;
// a second store on it needs prometheus.WrapRegistererWith, or
// RegisterMetrics fails with prometheus.AlreadyRegisteredError.
func (s *Store) RegisterMetrics(reg prometheus.Registerer) error {
	w, err := storemetrics.Register(reg)
	if err != nil {
		return err
	}
	if !s.metrics.writes.CompareAndSwap(nil, w) {
		w.Unregister()
		return errMetricsRegistered
	}
	if err := reg.Register(&s.metrics.imports); err != nil {
		w.Unregister()
		s.metrics.writes.Store(nil)
		return err
	}
	return nil
}

// errMetricsRegistered: RegisterMetrics was called twice on one store.
var errMetricsRegistered = errors.New("memstore: the store's metrics are registered already")

// writeStart is the start of a timed write: now with metrics, the zero
// time without (no clock read for nothing). A write method's first line
// is defer s.timeWrite("Op", s.writeStart()).
func (s *Store) writeStart() time.Time {
	if s.metrics.writes.Load() == nil {
		return time.Time{}
	}
	return time.Now()
}

// timeWrite records the latency of write op begun at start.
func (s *Store) timeWrite(op string, start time.Time) {
	if !start.IsZero() {
		s.metrics.writes.Load().Since(op, start)
	}
}
