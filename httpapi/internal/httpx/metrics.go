package httpx

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the request metrics of the APIs (docs: operations.md
// "Metrics"): a latency histogram by API, route pattern and status
// class, whose _count is the request count, and the requests in flight.
// RequestLog records them when given.
type Metrics struct {
	// inFlight counts the requests in flight, read by the gauge at a
	// scrape: a prometheus.Gauge's Inc and Dec are a compare-and-swap
	// loop each on a float, contended by every core (1.2% of a supplier
	// read's CPU at 56,000 requests a second on two cores), where an
	// atomic add is one instruction.
	inFlight atomic.Int64
	duration *prometheus.HistogramVec

	// observers keeps the histogram of each label set: a route has a
	// handful, and a lookup here costs less than the vector's.
	observers sync.Map // observerKey -> prometheus.Observer
	kept      atomic.Int32
}

// maxObservers bounds the observers kept: label sets past it (a
// router whose prefixes vary per request) are looked up each time.
const maxObservers = 1000

type observerKey struct {
	api, route string
	class      int
}

// DurationBuckets are the bounds, in seconds, of the request latency
// histogram: from a tenth of a millisecond (a page from memory) to ten
// seconds (an import's longest statement).
var DurationBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// NewMetrics registers the request metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "procure_http_request_duration_seconds",
			Help:    "Time from a request's arrival at the request log to its handler's return, by API, route pattern (as the mux matched it, \"(no route)\" for none) and status class; its _count counts requests.",
			Buckets: DurationBuckets,
		}, []string{"api", "route", "status_class"}),
	}
	inFlight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "procure_http_requests_in_flight",
		Help: "Requests being served.",
	}, func() float64 { return float64(m.inFlight.Load()) })
	for _, c := range []prometheus.Collector{inFlight, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

var classes = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

// observe records one request. stats, when not nil, is the cache of the
// Routed handler that served it; direct says that the route is the
// pattern that handler was registered with (not one behind a prefix).
func (m *Metrics) observe(stats *routeStats, api, route string, status int, seconds float64, direct bool) {
	class := status / 100
	if class < 1 || class > 5 {
		class = 5
	}
	if stats != nil && direct {
		stats.observer(m, api, route, class).Observe(seconds)
		return
	}
	m.lookup(api, route, class).Observe(seconds)
}

// lookup returns the histogram of a label set.
func (m *Metrics) lookup(api, route string, class int) prometheus.Observer {
	k := observerKey{api, route, class}
	if o, ok := m.observers.Load(k); ok {
		return o.(prometheus.Observer)
	}
	o := m.duration.WithLabelValues(api, route, classes[class-1])
	if m.kept.Load() < maxObservers {
		if _, loaded := m.observers.LoadOrStore(k, o); !loaded {
			m.kept.Add(1)
		}
	}
	return o
}

// routeStats keeps, for one Routed handler, the histograms of the route
// it serves: a handler registered on one pattern sees one r.Pattern, so
// a request finds its histogram with an atomic load, where the label
// lookup would hash three strings and box its key.
type routeStats struct {
	cur atomic.Pointer[routeObservers]
}

// routeObservers are the histograms of one route of one Metrics, by
// status class, each made at its first use.
type routeObservers struct {
	m          *Metrics
	api, route string
	byClass    [5]atomic.Pointer[prometheus.Observer]
}

func (s *routeStats) observer(m *Metrics, api, route string, class int) prometheus.Observer {
	ro := s.cur.Load()
	if ro == nil || ro.m != m || ro.route != route || ro.api != api {
		// The first request, or one of another Metrics (or pattern):
		// start over; a handler shared that way pays the lookup.
		next := &routeObservers{m: m, api: api, route: route}
		if !s.cur.CompareAndSwap(ro, next) {
			return m.lookup(api, route, class)
		}
		ro = next
	}
	if o := ro.byClass[class-1].Load(); o != nil {
		return *o
	}
	o := m.lookup(api, route, class)
	ro.byClass[class-1].Store(&o)
	return o
}
