package storemetrics

import (
	"io"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Imports counts the data-file imports of one store - the import
// families of docs/operations.md "Metrics" - whether or not metrics are
// registered; it is a prometheus.Collector reading them when gathered, so
// it costs an import two atomic adds per read and a request nothing. The
// zero value is ready to use.
type Imports struct {
	running     atomic.Int64
	read, size  atomic.Int64 // of the latest import to start
	ok, failed  atomic.Int64
	lastStarted atomic.Int64 // unix nanoseconds
}

// Start counts an import that begins reading r (size bytes, or 0 when
// unknown) and returns r counted, and the function to call with the
// import's error when it ends.
func (im *Imports) Start(r io.Reader, size int64) (io.Reader, func(error)) {
	im.running.Add(1)
	im.read.Store(0)
	im.size.Store(max(size, 0))
	im.lastStarted.Store(time.Now().UnixNano())
	return &countingReader{r: r, n: &im.read}, func(err error) {
		im.running.Add(-1)
		if err != nil {
			im.failed.Add(1)
		} else {
			im.ok.Add(1)
		}
	}
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

var (
	descImportRunning = prometheus.NewDesc("procure_import_running", "Data-file imports running.", nil, nil)
	descImportRead    = prometheus.NewDesc("procure_import_read_bytes", "Bytes the latest import to start has read of its file.", nil, nil)
	descImportSize    = prometheus.NewDesc("procure_import_size_bytes", "Size of the latest import's file, when its caller said (0: unknown).", nil, nil)
	descImportStarted = prometheus.NewDesc("procure_import_last_start_timestamp_seconds", "When the latest import started (Unix time; 0: none yet).", nil, nil)
	descImports       = prometheus.NewDesc("procure_imports_total", "Data-file imports finished, by result: ok or failed.", []string{"result"}, nil)
)

// Describe implements prometheus.Collector.
func (im *Imports) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descImportRunning, descImportRead, descImportSize, descImportStarted, descImports} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (im *Imports) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	gauge(descImportRunning, float64(im.running.Load()))
	gauge(descImportRead, float64(im.read.Load()))
	gauge(descImportSize, float64(im.size.Load()))
	started := 0.0
	if ns := im.lastStarted.Load(); ns != 0 {
		started = float64(ns) / 1e9
	}
	gauge(descImportStarted, started)
	ch <- prometheus.MustNewConstMetric(descImports, prometheus.CounterValue, float64(im.ok.Load()), "ok")
	ch <- prometheus.MustNewConstMetric(descImports, prometheus.CounterValue, float64(im.failed.Load()), "failed")
}
