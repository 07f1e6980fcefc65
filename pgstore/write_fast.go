package pgstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/supplier"
)

// Writes planned outside the lock (issue 22). runWrite holds the
// community's lock across a round trip to the node: the lock and the
// reads go in one batch, the node decides, the writes and COMMIT go in
// another. At a thousand writes a second on one community, on cores the
// readers keep busy, the writing goroutine waits for a core between the
// two and the lock is held well over a millisecond a write, which caps
// the community's writes below a thousand a second.
//
// A put of a supplier, contact or remittance address first tries
// runOptimistic instead: it reads what the write replaces, the
// database's clock and the community's high-water mark and generation
// *without* the lock, plans the write in Go with a planned stamp,
// supplier.NextStamp(clock, mark), and sends BEGIN, the lock, a guard, the
// writes and COMMIT in one batch: the lock is held for the database's own
// work only.
//
// The guard is a statement of its own after the lock, so it sees what the
// previous holder committed. It makes the write's stamp: the planned one,
// or the microsecond after the high-water mark when another write of the
// community committed a later stamp meanwhile (the stamping rule of
// docs/live-data.md, applied under the lock as before). The writes name
// the stamp through the transaction's settings (stampSQL, restampSQL,
// restampJSONSQL), so they store the guard's stamp wherever the plan put
// the planned one; their bucket counts name the stamp's bucket, the last
// (buckets.go: lastKey). And it checks that nothing else
// the plan rests on moved:
//
//   - the supplier's modifiedDate is the one read (or it is still absent):
//     every write of the supplier or of one of its contacts or addresses
//     restamps it, so the record the plan replaces is the stored one;
//   - the community's supplier_generation is the one read: imports and the
//     dates repair, which keep a file's dates, bump it;
//   - the stamp is not past supplier.LastStamp.
//
// When one of them moved, the guard fails the transaction and the write
// is done again the locked way, which always succeeds: the result is the
// same either way.
//
// Planned from the node's cache (WithSupplierCache): the first round trip
// reads nothing the node's cache does not hold already - the record the
// put replaces, the community's generation, a mark at least every date
// it holds - so a put whose community the cache serves skips it and
// sends the one batch above (fromCache). The guard checks the same things
// under the lock, so a cache behind the database (another node's write of
// the supplier, an import) costs a redo under the lock, never a wrong
// write. Two things differ. The planned stamp is the mark + 1 µs, a
// placeholder above every date of the plan's record, and the guard makes
// the stamp from the database's clock and the mark it reads under the
// lock, as the locked way does (never from the node's clock: nodes' clocks
// differ, the database's is the one the stamping rule names). And a put
// the cache shows to change nothing reads the database after all: a no-op
// answers with the stored record and writes nothing, so it is never
// decided from a copy the guard has not checked.
//
// Why a date equal to the planned stamp is the stamp: the planned stamp
// is above the high-water mark read, which is at least every date stored
// in the community (writes stamp at most it, imports raise it to their
// largest date). A date of the plan equal to it was set by the plan. The
// one exception, a createdDate an import left above its record's
// modifiedDate, would have to fall on that very microsecond. A text value
// of a document equal to the planned stamp's JSON would be rewritten too:
// a plan whose document holds the stamp's JSON more often than it stamped
// dates in it is done the locked way (stampsInDoc).

// errRaced is returned by runOptimistic when the guard found that what
// the plan rests on moved; nothing was written.
var errRaced = errors.New("pgstore: write raced another; redo under the lock")

// The stamp in the writes' statements. setStampSQL sets the
// transaction's settings they read: procure.stamp is the write's stamp;
// procure.planned and procure.planned_json are the planned one and its
// JSON. Under the lock (runWrite) the two stamps are the same.
//
// Every statement that names the stamp runs after the settings are set,
// even where a CASE would not take the stamp's branch: the planner may
// evaluate a stable function's branch while it estimates (a DELETE's
// bucket count failed on a session's emptied setting, the empty string as
// a timestamptz).
const (
	stampSQL   = `current_setting('procure.stamp')::timestamptz`
	plannedSQL = `current_setting('procure.planned')::timestamptz`
)

// restampSQL is the date expression e, or the stamp when e is the
// planned stamp (a createdDate the write set).
func restampSQL(e string) string {
	return `(CASE WHEN ` + e + ` = ` + plannedSQL + ` THEN ` + stampSQL + ` ELSE ` + e + ` END)`
}

// restampJSONSQL is the JSON text expression e with the planned stamp's
// JSON replaced by the stamp's.
func restampJSONSQL(e string) string {
	return `replace(` + e + `, current_setting('procure.planned_json'), current_setting('procure.stamp_json'))`
}

// stampJSONSQL is the JSON of the timestamptz expression e as Go writes
// a time.Time in UTC (RFC 3339, the fraction without trailing zeros).
func stampJSONSQL(e string) string {
	u := `(` + e + `) AT TIME ZONE 'UTC'`
	return `'"' || to_char(` + u + `, 'YYYY-MM-DD"T"HH24:MI:SS') || rtrim(rtrim(to_char(` + u + `, '.US'), '0'), '.') || 'Z"'`
}

// stampJSON is the JSON of a stamp, as the documents hold it.
func stampJSON(t time.Time) string {
	b, _ := json.Marshal(t) // a stamp is within RFC 3339's years
	return string(b)
}

// queueSetStamp queues the settings of a write stamped stamp under the
// lock: planned and made are the same.
func queueSetStamp(b *pgx.Batch, stamp time.Time) {
	b.Queue(`SELECT set_config('procure.stamp', $1::timestamptz::text, true), set_config('procure.planned', $1::timestamptz::text, true),
		set_config('procure.planned_json', $2, true), set_config('procure.stamp_json', $2, true)`,
		stamp, stampJSON(stamp))
}

// stampsInDoc reports whether doc holds the JSON of stamp exactly n
// times (the dates the plan stamped in it), so that restampJSONSQL
// rewrites those and nothing else.
func stampsInDoc(doc []byte, stamp time.Time, n int) bool {
	return bytes.Count(doc, []byte(stampJSON(stamp))) == n
}

// guardSQL is the guard: one row (the subqueries make it one even for an
// unknown community): the community's high-water mark under the lock,
// the write's stamp, the settings set, and a column that divides by zero
// when a check fails. A pipelined batch is sent whole before the database
// runs any of it, so only an error in the database can keep the writes
// queued after the guard and the COMMIT from running; a division by zero
// is such an error without a function of our own (no migration). Its
// operand reads the tables, so the planner cannot fold it. $3 is the
// planned stamp, $6 its JSON, $7 supplier.LastStamp; $8 is true for a
// plan from the node's cache, whose stamp is the database's
// clock_timestamp() (or the mark + 1 µs) instead of the planned one.
//
// The mark is the community's, or the stamp of the put before in the
// same transaction when there is one (its setting, local to the
// transaction: empty or unset in the first guard): the puts of a group
// write the community's mark once, after all of them (queueCounts), so a
// guard's stamp follows the previous put's and the mark it reports is
// the state that put left, as when each put wrote the mark itself.
var guardSQL = `WITH m AS (SELECT greatest(last_modified, nullif(current_setting('procure.stamp', true), '')::timestamptz) AS last_modified, supplier_generation
		FROM communities WHERE id = $1),
	c AS (SELECT last_modified, supplier_generation,
		greatest(CASE WHEN $8::bool THEN clock_timestamp() ELSE $3::timestamptz END, last_modified + interval '1 microsecond') AS stamp
		FROM m)
	SELECT (SELECT last_modified FROM c), (SELECT stamp FROM c),
		set_config('procure.stamp', (SELECT stamp FROM c)::text, true),
		set_config('procure.planned', $3::timestamptz::text, true),
		set_config('procure.planned_json', $6::text, true),
		set_config('procure.stamp_json', (SELECT ` + stampJSONSQL("stamp") + ` FROM c), true),
		1 / coalesce((SELECT CASE WHEN c.supplier_generation = $2::bigint AND c.stamp <= $7::timestamptz
			AND (SELECT s.modified_date FROM suppliers s WHERE s.community_id = $1 AND s.id = $4::uuid) IS NOT DISTINCT FROM $5::timestamptz
			THEN 1 ELSE 0 END FROM c), 0)`

// divisionByZero is the SQLSTATE of the guard's failure.
const divisionByZero = "22012"

// optimistic is what a write planned outside the lock read, and the
// guard that checks it under the lock.
type optimistic struct {
	// communityLock's fields, read without the lock: found, the clock,
	// the mark. next() is the planned stamp.
	communityLock
	gen int64
	// supplierID is the supplier the write changes; modified its
	// modifiedDate as read (nil: there was none).
	supplierID uuid.UUID
	modified   *time.Time
	// planned is the stamp the write was planned with, once stampWrite
	// made it; made the stamp the guard gave it.
	planned, made time.Time
	// prev is the mark the guard read under the lock: the state the write
	// changed (ownWrite.prev).
	prev *time.Time
	// fromCache: planned from the node's cache, with no read (useCache).
	fromCache bool
	// buckets are the write's bucket changes, queued after its
	// transaction's writes, in one statement for a group's puts
	// (queueGroup, queueCounts); the buckets that grow past their size go
	// to *split.
	buckets []bucketDelta
	split   *[]bucketRef
	// terms is what the write changes of the search terms, queued with
	// the buckets (a put of a supplier; queueTermChanges).
	terms termChanges
}

// creates reports whether the write creates its supplier: it was planned
// over none (modified nil; a contact's or address's put reads its
// supplier's), which the guard checks is still so.
func (o *optimistic) creates() bool { return o.modified == nil }

// cacheBase is what the node's cache holds for a put (writeBase).
type cacheBase struct {
	rec   supplier.Record
	found bool
	mark  time.Time
	gen   int64
}

// useCache has the write planned from b, the cache's state, instead of
// the read of o.queue: the planned stamp is the microsecond after the
// latest of b's mark and dates, the dates of the rows the plan writes
// that it does not stamp (the record's, and the part's a child put
// replaces): a date equal to the planned stamp is then one the plan set.
// modified is the modifiedDate of the supplier in b (nil: b has none).
func (o *optimistic) useCache(b *cacheBase, modified *time.Time, dates ...time.Time) {
	o.fromCache = true
	o.found = true
	o.gen = b.gen
	o.modified = modified
	mark := b.mark
	d := &b.rec.Detail
	dates = detailsDates(d, append(dates, d.ModifiedDate, d.CreatedDate))
	for _, t := range dates {
		if t.After(mark) {
			mark = t
		}
	}
	o.last = &mark
	o.now = time.Time{} // next() is the mark + 1 µs
}

// stampWrite returns the write's planned stamp, supplier.NextStamp of
// the clock and the mark read, or an error matching
// supplier.ErrStampExhausted.
func (o *optimistic) stampWrite() (time.Time, error) {
	st, err := o.next()
	o.planned = st
	return st, err
}

// queue queues the read of the clock, the mark and the generation. Queue
// it after the reads of what the write replaces: in READ COMMITTED each
// statement sees what committed before it began, so the mark is at least
// the state those reads saw (a no-op write reports that state to the
// cache as its mark).
func (o *optimistic) queue(b *pgx.Batch, community string) {
	b.Queue(`SELECT clock_timestamp(), last_modified, supplier_generation FROM communities WHERE id = $1`, community).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			if err := rows.Scan(&o.now, &o.last, &o.gen); err != nil {
				return err
			}
			o.found = true
		}
		return rows.Err()
	})
}

// queueLock queues the community's lock, which the guards follow.
func queueLock(b *pgx.Batch, community string) {
	b.Queue(`SELECT 1 FROM communities WHERE id = $1 FOR UPDATE`, community)
}

// queueGuard queues the guard of the write, after the lock.
func (o *optimistic) queueGuard(b *pgx.Batch, community string) {
	var modified any // an untyped nil would have no type to send in the simple protocol
	if o.modified != nil {
		modified = *o.modified
	}
	b.Queue(guardSQL, community, o.gen, o.planned, o.supplierID, modified, stampJSON(o.planned), supplier.LastStamp, o.fromCache).
		QueryRow(func(row pgx.Row) error {
			var one int
			var settings [4]string
			if err := row.Scan(&o.prev, &o.made, &settings[0], &settings[1], &settings[2], &settings[3], &one); err != nil {
				return err
			}
			o.made = o.made.UTC()
			return nil
		})
}

// lockedMark is the mark the guard read under the lock (zero: none).
func (o *optimistic) lockedMark() time.Time {
	if o.prev == nil {
		return time.Time{}
	}
	return o.prev.UTC()
}

// runOptimistic runs read (the reads of what the write replaces, then
// o.queue; nil when o was planned from the cache) outside any
// transaction, then decide, which plans the write
// from what read scanned with the stamp o.stampWrite() and returns its
// statements, or nil to write nothing (a no-op, which needs no stamp).
// Once it returns nil, o.made is the stamp the write got. The statements are sent after
// BEGIN, the community's lock and the guard, with COMMIT, in one batch.
// It returns errRaced, having written nothing, when the guard failed.
func (s *Store) runOptimistic(ctx context.Context, community string, o *optimistic, read *pgx.Batch, decide func() (*pgx.Batch, error)) error {
	plan := func() (*pgx.Batch, error) {
		if err := o.known(community); err != nil {
			return nil, err
		}
		writes, err := decide()
		if err != nil || writes == nil {
			return nil, err
		}
		if s.afterPlan != nil {
			s.afterPlan() // tests: another write between the plan and the lock
		}
		return writes, nil
	}
	if read == nil {
		// Planned from the cache: nothing to read, so no connection until
		// the put is sent, with the community's other puts queued
		// meanwhile (write_group.go).
		writes, err := plan()
		if err != nil || writes == nil {
			return err
		}
		return s.commitGrouped(ctx, community, o, writes)
	}
	conn, release, err := s.acquireWrite(ctx, community)
	if err != nil {
		return err
	}
	defer release()
	if err := conn.SendBatch(ctx, read).Close(); err != nil {
		return err
	}
	writes, err := plan()
	if err != nil || writes == nil {
		return err
	}
	if raced, err := sendPuts(ctx, conn, community, []*groupedPut{{o: o, writes: writes}}); err != nil {
		if raced {
			s.writesRaced.Add(1)
			return errRaced
		}
		return err
	}
	s.writesFast.Add(1)
	return nil
}
