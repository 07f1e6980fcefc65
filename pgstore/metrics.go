package pgstore

import (
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/procurekit/procure/internal/storemetrics"
)

// WithMetrics registers the store's metrics on reg when Open succeeds,
// and unregisters them at Close (docs: operations.md "Metrics"): the
// connection pool (pgxpool.Stat), the latency of every write method,
// the supplier cache of each community (loaded, age, sync lag, load
// progress), the credential cache's hits and misses, and the progress
// of data-file imports. Everything but the write latency is read when
// reg is gathered, from counters the store keeps anyway, so the option
// costs a request nothing. reg is the caller's own registry (never
// prometheus.DefaultRegisterer unless the caller chooses it); two
// stores on one registry need prometheus.WrapRegistererWith to tell
// them apart, or Open fails with prometheus.AlreadyRegisteredError.
func WithMetrics(reg prometheus.Registerer) Option { return func(o *options) { o.metrics = reg } }

// storeMetrics are the metrics of one Store; nil without WithMetrics
// (its methods then do nothing).
type storeMetrics struct {
	reg    prometheus.Registerer
	cs     []prometheus.Collector
	writes *storemetrics.Writes
}

// WriteBuckets are the bounds, in seconds, of the write latency
// histogram (internal/storemetrics, shared with memstore).
var WriteBuckets = storemetrics.Buckets

// registerMetrics registers s's metrics on reg.
func (s *Store) registerMetrics(reg prometheus.Registerer) error {
	m := &storeMetrics{reg: reg}
	var err error
	if m.writes, err = storemetrics.Register(reg); err != nil {
		return err
	}
	for _, c := range []prometheus.Collector{&collector{s: s}, &s.imports} {
		if err := reg.Register(c); err != nil {
			m.unregister()
			return err
		}
		m.cs = append(m.cs, c)
	}
	s.metrics = m
	return nil
}

func (m *storeMetrics) unregister() {
	if m == nil {
		return
	}
	m.writes.Unregister()
	for _, c := range m.cs {
		m.reg.Unregister(c)
	}
}

// timeWrite records a write method's latency: defer s.timeWrite("PutSupplier", time.Now()).
func (s *Store) timeWrite(op string, start time.Time) {
	if s.metrics != nil {
		s.metrics.writes.Since(op, start)
	}
}

// collector reads the store's state when the registry is gathered.
type collector struct{ s *Store }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	descPoolConns    = desc("procure_pg_pool_connections", "Connections of the store's pool, by state: acquired (in use), idle, constructing.", "state")
	descPoolMax      = desc("procure_pg_pool_max_connections", "The most connections the pool opens.")
	descPoolAcquires = desc("procure_pg_pool_acquires_total", "Connections acquired from the pool.")
	descPoolEmpty    = desc("procure_pg_pool_empty_acquires_total", "Acquires that waited because the pool had no idle connection.")
	descPoolWait     = desc("procure_pg_pool_acquire_wait_seconds_total", "Time acquires spent waiting for a connection because none was idle.")
	descPoolCanceled = desc("procure_pg_pool_canceled_acquires_total", "Acquires canceled by their context while waiting.")

	descCacheLoaded   = desc("procure_supplier_cache_loaded", "1 when the community's suppliers are served from this node's cache, 0 while it loads or reloads (reads go to the database).", "community")
	descCacheAge      = desc("procure_supplier_cache_age_seconds", "Age of the snapshot the community's cache last synced from: what a read from the cache may miss. Reads go to the database past 0.9 s.", "community")
	descCacheLag      = desc("procure_supplier_cache_sync_lag_seconds", "At the last poll, how far the database's newest commit stamp of the community was ahead of what the cache had applied (0: caught up).", "community")
	descCacheRead     = desc("procure_supplier_cache_load_read_suppliers", "Suppliers the community's latest cache load has read so far.", "community")
	descCacheExpected = desc("procure_supplier_cache_load_expected_suppliers", "Suppliers the community held when its latest cache load began.", "community")
	descCacheSyncs    = desc("procure_supplier_cache_read_syncs_total", "Reads that synced the supplier cache with the database before they were served: the node's own writes were not all applied (another node's write came between, or one of the node's writes was still on its way past 2 ms).")
	descCacheLoading  = desc("procure_supplier_cache_loading", "1 while a background load of the community's cache runs.", "community")

	descReplicaLag   = desc("procure_pg_replica_lag_seconds", "With a read replica: how old the replica's data was at the node's latest measure (every 100 ms), from its replay position against the primary's; reads go to the primary past 0.3 s.")
	descReplicaReads = desc("procure_pg_replica_reads_total", "With a read replica: reads that could be served a little old, by where they went: replica, or primary (the replica too far behind, or behind this node's own writes).", "source")

	descWritePaths = desc("procure_pg_supplier_puts_total", "Puts of suppliers, contacts and remittance addresses that wrote, by how: planned outside the community's lock from a read and committed in one round trip under it (optimistic), planned from the node's supplier cache and committed in one round trip with no read before it (cache), or redone under the lock because another write moved what the plan read (redone).", "path")

	descWritesGrouped = desc("procure_pg_supplier_puts_grouped_total", "Puts planned from the node's supplier cache (path=\"cache\" of procure_pg_supplier_puts_total) that committed in one transaction with other puts of their community, queued while the community had as many transactions in flight from the node as it may.")

	descCredLookups = desc("procure_credential_cache_lookups_total", "Lookups of the node's credential cache (tokens, service accounts, keys, a community's auto-roles) answered from memory (hit) or the database (miss).", "result")
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPoolConns, descPoolMax, descPoolAcquires, descPoolEmpty, descPoolWait, descPoolCanceled,
		descCacheLoaded, descCacheAge, descCacheLag, descCacheRead, descCacheExpected, descCacheLoading, descCacheSyncs,
		descReplicaLag, descReplicaReads, descWritePaths, descWritesGrouped, descCredLookups} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}

	st := s.pool.pool.Stat()
	gauge(descPoolConns, float64(st.AcquiredConns()), "acquired")
	gauge(descPoolConns, float64(st.IdleConns()), "idle")
	gauge(descPoolConns, float64(st.ConstructingConns()), "constructing")
	gauge(descPoolMax, float64(st.MaxConns()))
	counter(descPoolAcquires, float64(st.AcquireCount()))
	counter(descPoolEmpty, float64(st.EmptyAcquireCount()))
	counter(descPoolWait, st.EmptyAcquireWaitTime().Seconds())
	counter(descPoolCanceled, float64(st.CanceledAcquireCount()))

	if cache := s.cache; cache != nil {
		counter(descCacheSyncs, float64(cache.readSyncs.Load()))
		now := time.Now()
		cache.mu.RLock()
		coms := make([]*cachedCom, 0, len(cache.coms))
		for _, cc := range cache.coms {
			coms = append(coms, cc)
		}
		cache.mu.RUnlock()
		for _, cc := range coms {
			loaded := 0.0
			if st := cc.state.Load(); st != nil && !st.stale {
				loaded = 1
				gauge(descCacheAge, now.Sub(st.syncedAt).Seconds(), cc.id)
			}
			gauge(descCacheLoaded, loaded, cc.id)
			gauge(descCacheLag, time.Duration(cc.lag.Load()).Seconds(), cc.id)
			gauge(descCacheRead, float64(cc.loadRead.Load()), cc.id)
			gauge(descCacheExpected, float64(cc.loadExpected.Load()), cc.id)
			loading := 0.0
			if cc.loading.Load() {
				loading = 1
			}
			gauge(descCacheLoading, loading, cc.id)
		}
	}

	if r := s.replica; r != nil {
		gauge(descReplicaLag, time.Duration(mono()-r.asOf.Load()).Seconds())
		counter(descReplicaReads, float64(r.served.Load()), "replica")
		counter(descReplicaReads, float64(r.fallbacks.Load()), "primary")
	}

	// From the cache first: a put counts in writesFast before in
	// writesFromCache, so optimistic never goes below zero.
	fromCache := s.writesFromCache.Load()
	counter(descWritePaths, float64(s.writesFast.Load()-fromCache), "optimistic")
	counter(descWritePaths, float64(fromCache), "cache")
	counter(descWritePaths, float64(s.writesRaced.Load()), "redone")
	counter(descWritesGrouped, float64(s.writesGrouped.Load()))

	if creds := s.creds; creds != nil {
		counter(descCredLookups, float64(creds.hits.Load()), "hit")
		counter(descCredLookups, float64(creds.misses.Load()), "miss")
	}

}

// startImport counts an import that begins reading r (size bytes, or 0
// when unknown): internal/storemetrics.Imports.Start.
func (s *Store) startImport(r io.Reader, size int64) (io.Reader, func(error)) {
	return s.imports.Start(r, size)
}
