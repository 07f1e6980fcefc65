// Package pgstore is the PostgreSQL backend: every store interface of the
// library - supplier.Store, user.Store, auth.TokenStore, auth.KeyStore, the
// community's auto-roles and its budget table - over one PostgreSQL
// database that any number of stateless service nodes share.
//
// Open connects (pgx/v5, pgxpool) and brings the schema up to date: the
// versioned SQL files of migrations/ are embedded in the binary and applied
// in one transaction under a PostgreSQL advisory lock, so nodes that start
// together do not race, and each applied version is recorded in the table
// schema_migrations. Import loads a data file (datafile.File) with COPY in
// one transaction.
//
// Deployment: the store works on a direct connection and through a pooler
// in transaction mode (PgBouncer's pool_mode = transaction), which gives
// each transaction whichever server connection is free: it keeps no
// session state outside a transaction (db.go: the statement timeout is
// set per transaction; locks are transaction-level) and prepares named
// statements only on a connection it finds direct (internal/pgpool).
// WithMigrateDSN sends the migrations to the database directly;
// WithReadDSN reads from a streaming replica while it is less than 300 ms
// behind and has this node's writes (replica.go). The README's
// "PostgreSQL" section gives the settings; bench/README.md the figures.
//
// Behaviour is that of memstore, which the conformance suites
// (supplier/suppliertest, user/usertest) check for both stores: the same
// ordering (docs: paging.md: names by collation keys computed in Go by
// internal/textkey, stored as bytea so that the order does not depend on
// the database's collation; empty values last in both directions; ties on
// id ascending), the same prefix query, the same errors. Uniqueness of user ids and of usernames per community is enforced
// by unique indexes, so concurrent creates on several nodes never produce a
// duplicate.
//
// Live data: every supplier, contact and remittance address write
// (supplier.Writer) is one transaction that locks its community's row, so
// the writes of a community commit one after another and their
// modifiedDate stamps (greatest(clock_timestamp(), the community's
// high-water mark + 1 µs)) increase in commit order on every node: a
// client polling modifiedSince with the largest modifiedDate it has seen
// misses nothing. A put is planned before the lock and checked under it
// (write_fast.go): from the node's supplier cache when it serves the
// community, in one round trip, else from a read first. The data-file
// import (Import, ImportStream) is an upsert in one transaction,
// streamed through temporary tables: a 2.9 GB file of 1,000,000
// suppliers (examples/gendata) imported in 5 min 42 s with a peak
// resident memory of 106 MB (TestImportStreamMemory, busy 2-core
// machine).
//
// Ready (procure.Readier) answers a readiness probe: the database
// answers, its schema has this build's migrations, and the supplier
// cache, when on, has warmed up - held every community once (unless
// WithReadyWhileCacheLoads); docs: operations.md "Health". WithMetrics
// registers the store's Prometheus metrics - pool, write latency, cache,
// credential cache, imports - on the caller's registry (docs:
// operations.md "Metrics").
//
// Reads: from the database, or from a per-node cache (WithSupplierCache,
// on by default in examples/server). Served from the database, a list
// costs the database and the node (pgx decoding, round trips) several
// times memstore's whole request, and a broad prefix query costs what its
// matches do. With the cache each node keeps every community's suppliers
// in a supplier index
// (internal/supplierindex, the engine of memstore's reads) that follows the
// database's changes in commit order (cache.go):
//
//   - a sync reads, in one repeatable-read snapshot, the suppliers stamped
//     above the high-water mark it last applied (with their contacts and
//     addresses) and the tombstones deletes leave (migration 0006); since
//     stamps increase in commit order, nothing committed is skipped, and
//     applying the tombstones then the suppliers in stamp order shows
//     readers a prefix of the commit order;
//   - an import keeps the file's dates, below the mark: it bumps the
//     community's generation, and caches reload the community (reads go to
//     the database meanwhile);
//   - a poller checks all communities in one query every 200 ms; a read is
//     served from the cache only while its last sync is younger than
//     900 ms, so no node serves data older than the one-second bound - one
//     that cannot reach the database reads from it and fails as the
//     database does (503);
//   - a node's own write is seen by its next read: the write applies
//     itself to the cache as it commits, in stamp order (when another
//     node's write came between, the next read syncs first: one round
//     trip, coalesced across readers);
//   - a community loads at the first read that needs it when small, in
//     the background otherwise (every community is queued at Open), while
//     reads go to the database.
//
// The costs of both paths at 1,000,000 suppliers (lists, queries, the
// cache's load and memory, writes) are in bench/README.md ("PostgreSQL,
// 1,000,000 suppliers" and the session figures after it), measured by
// BenchmarkPostgres and TestSupplierCacheMemory.
//
// So the cache is what the bench harness's 3x-of-memstore target needs (a
// read from the database costs the node more in decoding and round trips
// than memstore's whole request), and the database path stays for
// correctness when the cache cannot be trusted to be fresh. With it, a
// request's remaining round trip was the bearer token's lookup:
// WithCredentialCache (credcache.go) answers a lookup made less than half
// a second ago from memory, forgotten at the node's own credential writes.
// In the bench harness (bench/README.md "Session 4 figures") examples/server
// with both caches serves lists near memstore's rate; reading from the
// database, at a small fraction of it.
//
// Users (WithUserCache, usercache.go): each node keeps the users of the
// communities it serves by id and by username key and follows the
// database with one small poll every 200 ms - every user write records
// its transaction id (migration 0011), and a poll reads the rows of the
// transactions its last snapshot had not seen; a user's version orders its
// states, so the node's own writes apply at once (from the row the write
// returned) and a later poll bringing an older state changes nothing. A
// read from memory costs a map lookup and a copy of the user instead of a
// round trip (BenchmarkUserRead; figures in bench/README.md).
//
// The database path (every read without the cache, and a cache's reads
// until it is loaded or while it is behind):
//
//   - every order of the supplier list (name, createdDate, modifiedDate;
//     ascending and descending, ties on id ascending) has its own index, so
//     a page is an index-only scan and then the page's rows by primary key;
//   - deep pages do not walk the index from the start: each community's
//     keys of each order are cut into counted buckets of about a thousand
//     (buckets.go), kept exact by the writes under the community lock, so
//     page 1,000 reads one bucket's worth of index entries, not 20,020;
//   - the unfiltered total is a per-community count kept by the writes;
//     a modifiedSince total counts the index from the watermark on, which
//     a poll keeps short;
//   - the prefix query is a range scan of one table of search terms (the
//     match keys of the name, legal business name, supplierId and keywords)
//     joined to their suppliers' rows for the sort keys and modifiedDate,
//     or, for a first page of a query that matches many suppliers, a walk
//     of the order's index that checks each supplier's terms until the
//     page is full; a deep page's cost grows with the number of matches (a
//     one-letter query matches a fifth of the suppliers), and the store's
//     statement timeout bounds it. A put writes only the terms it adds or
//     drops (migration 0012).
package pgstore
