package pgstore

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/pgmigrate"
)

var _ procure.Readier = (*Store)(nil)

// ReadyTimeout bounds the round trip of Ready when its context allows
// more: a database that does not answer within it is as good as gone
// for a readiness probe, which must answer before its own timeout.
const ReadyTimeout = time.Second

// WithReadyWhileCacheLoads has Ready report the store ready while the
// supplier cache (WithSupplierCache) is still warming up, loading every
// community the database holds: reads go to the database
// until then, correct but slower (see the package doc's figures). Use it
// when every node may start at once (a whole cluster restarted): without
// it, no node is ready until its cache is loaded. Without the cache it
// changes nothing.
func WithReadyWhileCacheLoads() Option { return func(o *options) { o.readyEarly = true } }

// Ready reports whether the store can answer correctly now (procure.Readier;
// docs: operations.md "Health"): the database answers within ReadyTimeout,
// its schema has this build's latest migration (a newer build's later
// migrations only add, so a newer schema is fine), and, with the supplier
// cache on and unless WithReadyWhileCacheLoads, the cache has warmed up:
// it has held, once, every community the database holds (those imported
// through the store after Open included, so that a node that starts with
// an import warms up with it). Once warm, later loads - a reload after an
// import, a community created later - never make the store unready:
// reads go to the database meanwhile, as they do whenever the cache
// falls behind. It costs one round trip.
func (s *Store) Ready(ctx context.Context) error {
	want, err := latestMigration()
	if err != nil {
		return procure.NotReady("this build's migrations do not load", err)
	}
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	var have bool
	err = s.primaryReads().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`, want).Scan(&have)
	if err != nil {
		return procure.NotReady("database does not answer", err)
	}
	if !have {
		return procure.NotReady("database schema lacks migration "+strconv.Itoa(want)+", this build's latest", nil)
	}
	if s.cache != nil && !s.readyEarly {
		switch warm, loaded, of, listed := s.cache.warmth(); {
		case warm, listed && of == 0: // an empty database has nothing to load
		case !listed:
			return procure.NotReady("supplier cache starting", nil)
		default:
			return procure.NotReady(fmt.Sprintf("supplier cache loading: %d of %d communities loaded", loaded, of), nil)
		}
	}
	return nil
}

// latestMigration is the highest version of the embedded migrations.
var latestMigration = sync.OnceValues(func() (int, error) {
	ms, err := pgmigrate.Load(migrationFiles)
	if err != nil || len(ms) == 0 {
		return 0, err
	}
	return ms[len(ms)-1].Version, nil
})
