// Package storemetrics is the one definition of the store write latency
// histogram, procure_store_write_duration_seconds (docs: operations.md
// "Metrics"), which memstore and pgstore both register, so that a
// dashboard reads the same family, labels and buckets whichever store a
// node runs.
package storemetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Name is the family's name.
const Name = "procure_store_write_duration_seconds"

// Buckets are the bounds, in seconds, of the histogram: from half a
// millisecond (an in-memory write) to five seconds (a PostgreSQL commit
// under a lock queue).
var Buckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}

// Writes times the write methods of one store. A nil *Writes times
// nothing, so a store without metrics calls it all the same.
type Writes struct {
	reg prometheus.Registerer
	h   *prometheus.HistogramVec
}

// Register registers the histogram on reg. It fails with
// prometheus.AlreadyRegisteredError when reg holds the family already
// (two stores on one registry need prometheus.WrapRegistererWith).
func Register(reg prometheus.Registerer) (*Writes, error) {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    Name,
		Help:    "Time a write method of the store took, from its call to its return (on PostgreSQL: its transaction committed or failed), by method.",
		Buckets: Buckets,
	}, []string{"op"})
	if err := reg.Register(h); err != nil {
		return nil, err
	}
	return &Writes{reg: reg, h: h}, nil
}

// Since records that the write method op, begun at start, returned now:
// defer w.Since("PutSupplier", time.Now()).
func (w *Writes) Since(op string, start time.Time) {
	if w != nil {
		w.h.WithLabelValues(op).Observe(time.Since(start).Seconds())
	}
}

// Unregister removes the histogram from the registry it was registered
// on.
func (w *Writes) Unregister() {
	if w != nil {
		w.reg.Unregister(w.h)
	}
}
