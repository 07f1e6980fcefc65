package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/supplierindex"
	"github.com/procurekit/procure/supplier"
)

var _ supplier.Writer = (*Store)(nil)

// How writes are stamped (docs: live-data.md): every write of a
// supplier, contact or remittance address runs in one transaction that
// first locks its community's row (SELECT ... FOR UPDATE) and then reads
// clock_timestamp() and communities.last_modified in a statement of its
// own (so, in READ COMMITTED, it sees the high-water mark the previous
// holder of the lock committed); the stamp is supplier.NextStamp of the
// two, the greater of the clock and the mark + 1 µs, and a write that
// would need one past supplier.LastStamp rolls back. A write that changes
// something stores the stamp as the new high-water mark. The lock is held
// to the commit, and PostgreSQL makes a transaction visible before it
// releases its locks, so the writes of one community commit one after
// another in stamp order, on any number of nodes: a reader that sees a
// stamp sees every smaller one, and polling modifiedSince with the largest
// modifiedDate seen (inclusive) misses nothing. Writes of different
// communities do not wait for each other.
//
// That is the locked way (runWrite), which deletes take. Puts are planned
// outside the lock first (runOptimistic, write_fast.go) with the clock
// and the mark read before it; their guard, a statement of its own after
// the lock, makes the stamp the greater of the planned one and the mark
// it sees + 1 µs, so the order above holds the same.

// supplierWriteColumns are the columns supplierRow fills, in its order.
var supplierWriteColumns = slices.Concat([]string{"community_id", "id"}, summaryTextNames, []string{
	"tin_last_verified_date", "modified_date", "created_date", "keywords", "details", "name_key",
})

// supplierRow returns the values of supplierWriteColumns for r.
func supplierRow(community string, r *supplier.Record) ([]any, error) {
	det, err := detailsJSON(&r.Detail)
	if err != nil {
		return nil, err
	}
	return rowWithDetails(community, r, det), nil
}

// rowWithDetails is supplierRow with r's details column, det, encoded.
func rowWithDetails(community string, r *supplier.Record, det []byte) []any {
	var detArg any
	if det != nil {
		// A string, not the []byte: in the exec and simple protocol
		// modes, where the parameter's type is not known, a []byte is
		// sent as bytea text, which is no JSON (internal/pgpool).
		detArg = string(det)
	}
	keywords := r.Keywords
	if keywords == nil {
		keywords = []string{}
	}
	row := make([]any, 0, len(supplierWriteColumns))
	row = append(row, community, r.ID)
	row = append(row, summaryTextValues(&r.Summary)...)
	row = append(row, r.TinLastVerifiedDate, r.ModifiedDate, r.CreatedDate, keywords, detArg,
		nullKey(r.Name.String()))
	return row
}

// upsertSupplierSQL writes one supplier row ($1, $2, ... in the order of
// supplierWriteColumns) stamped with the write's stamp (write_fast.go):
// its modifiedDate and the dates in its details that are the planned
// stamp become the stamp, and so does a createdDate that is.
var upsertSupplierSQL = func() string {
	sql := `INSERT INTO suppliers (` + joinColumns(supplierWriteColumns, "") + `) VALUES (`
	for i, c := range supplierWriteColumns {
		if i > 0 {
			sql += ", "
		}
		arg := "$" + itoa(i+1)
		switch c {
		case "modified_date":
			sql += restampSQL(arg + "::timestamptz")
		case "created_date":
			sql += restampSQL(arg + "::timestamptz")
		case "details":
			sql += restampJSONSQL(arg+"::text") + "::json"
		default:
			sql += arg
		}
	}
	return sql + `) ON CONFLICT (community_id, id) DO UPDATE SET ` + updateSet(supplierWriteColumns[2:])
}()

func joinColumns(cols []string, prefix string) string {
	out := ""
	for i, c := range cols {
		if i > 0 {
			out += ", "
		}
		out += prefix + c
	}
	return out
}

// updateSet is "c = excluded.c, ..." for cols.
func updateSet(cols []string) string {
	out := ""
	for i, c := range cols {
		if i > 0 {
			out += ", "
		}
		out += c + " = excluded." + c
	}
	return out
}

// lockCommunity locks the community's row to the end of tx, or returns an
// error matching procure.ErrUnknownCommunity. more, when not nil, queues
// reads that run after the lock in the same round trip.
func lockCommunity(ctx context.Context, tx pgx.Tx, community string, more func(b *pgx.Batch)) error {
	var lk communityLock
	b := &pgx.Batch{}
	lk.queue(b, community)
	if more != nil {
		more(b)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	return lk.known(community)
}

// communityLock is the lock of a community's row and what the stamp of
// the write that holds it is made of, queued into a batch.
type communityLock struct {
	found bool
	// now is the database's clock; last the community's high-water mark
	// (nil: nothing stamped yet). supplier.NextStamp makes the stamp.
	now  time.Time
	last *time.Time
}

// queue queues the lock and the read of the stamp.
func (lk *communityLock) queue(b *pgx.Batch, community string) {
	b.Queue(`SELECT 1 FROM communities WHERE id = $1 FOR UPDATE`, community).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			lk.found = true
		}
		return rows.Err()
	})
	// A statement of its own, after the lock: it sees what the previous
	// holder committed.
	b.Queue(`SELECT clock_timestamp(), last_modified FROM communities WHERE id = $1`, community).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			if err := rows.Scan(&lk.now, &lk.last); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// known returns, once the batch has run, nil or an error matching
// procure.ErrUnknownCommunity.
func (lk *communityLock) known(community string) error {
	if !lk.found {
		return fmt.Errorf("pgstore: community %q: %w", community, procure.ErrUnknownCommunity)
	}
	return nil
}

// mark is the community's high-water mark the lock read (zero: none).
func (lk *communityLock) mark() time.Time {
	if lk.last == nil {
		return time.Time{}
	}
	return lk.last.UTC()
}

// next returns the stamp of the write (supplier.NextStamp), or an error
// matching supplier.ErrStampExhausted: the write must then change nothing
// (runWrite rolls it back).
func (lk *communityLock) next() (time.Time, error) {
	var last time.Time
	if lk.last != nil {
		last = *lk.last
	}
	return supplier.NextStamp(lk.now, last)
}

// Write transactions in two round trips. A write is a transaction that
// locks its community, reads what it replaces, decides in Go what to
// write, and writes. With BEGIN, the lock and the reads sent as one
// pipelined batch, and the writes and COMMIT as another, it costs two
// round trips instead of four (BEGIN, reads, writes, COMMIT): the lock is
// held for one round trip and the Go decision in between, as before. A
// write that changes nothing, or fails, ends with a ROLLBACK instead.
//
// The rare follow-up work that must read what the writes did (splitting a
// bucket that grew past twice its size, buckets.go) runs after the commit
// in a transaction of its own under the same lock: the counts are exact
// either way, a bucket only stays larger than intended until it runs.

// beginWrite returns a batch that starts a write transaction: queue the
// lock and the reads into it and pass it to runWrite.
func beginWrite() *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	return b
}

// runWrite runs first (from beginWrite), a write of community, then
// decide, which reads what first's statements scanned and returns the
// statements that write, or nil to end the transaction without writing.
// The writes are sent with COMMIT. An error from decide or from either
// batch rolls the transaction back and is returned.
func (s *Store) runWrite(ctx context.Context, community string, first *pgx.Batch, decide func() (*pgx.Batch, error)) error {
	conn, release, err := s.acquireWrite(ctx, community) // write_slots.go
	if err != nil {
		return err
	}
	defer release()
	rollback := func(err error) error {
		conn.endTx(ctx)
		return err
	}
	if err := conn.SendBatch(ctx, first).Close(); err != nil {
		return rollback(err)
	}
	second, err := decide()
	if err != nil || second == nil {
		return rollback(err)
	}
	second.Queue(`COMMIT`)
	if err := conn.SendBatch(ctx, second).Close(); err != nil {
		return rollback(err)
	}
	return nil
}

// splitLater splits, after the write that grew them committed, the
// buckets it reported past twice bucketSize: under the community's lock,
// each one that still is (another write may have split it meanwhile). A
// failure leaves the bucket whole, exact and only larger than intended;
// the next write that grows it tries again.
func (s *Store) splitLater(ctx context.Context, community string, refs []bucketRef) {
	if len(refs) == 0 {
		return
	}
	_ = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockCommunity(ctx, tx, community, nil); err != nil {
			return err
		}
		var cur []bucketRef
		for _, ref := range refs {
			var n int64
			err := tx.QueryRow(ctx, `SELECT n FROM supplier_buckets WHERE community_id = $1 AND ord = $2 AND lo = $3`,
				community, int16(ref.ord), ref.lo).Scan(&n)
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			if n > 2*int64(bucketSize) {
				ref.n = n
				cur = append(cur, ref)
			}
		}
		return splitBuckets(ctx, tx, community, cur)
	})
}

// termChanges is what a put changes of its supplier's search terms
// (records.go: terms): the terms it drops and the ones it adds, with
// their lcp_prev. A term whose lcp_prev changes is in both. The rows hold
// no sort keys (migration 0012), so a put that keeps the terms changes
// none.
type termChanges struct {
	id      uuid.UUID
	dropped []string
	added   []string
	lcps    []int32 // of added
}

// changedTerms returns what putting r over old (nil: none) changes of
// the supplier's search terms.
func changedTerms(old, r *supplier.Record) termChanges {
	c := termChanges{id: r.ID}
	nts, nls := terms(r, nil, nil)
	var ots []string
	var ols []int32
	if old != nil {
		ots, ols = terms(old, nil, nil)
	}
	// Both lists are sorted: one merge.
	i, j := 0, 0
	for i < len(ots) || j < len(nts) {
		switch {
		case j == len(nts) || i < len(ots) && ots[i] < nts[j]:
			c.dropped = append(c.dropped, ots[i])
			i++
		case i == len(ots) || nts[j] < ots[i]:
			c.added, c.lcps = append(c.added, nts[j]), append(c.lcps, nls[j])
			j++
		default: // the same term
			if ols[i] != nls[j] {
				c.dropped = append(c.dropped, ots[i])
				c.added, c.lcps = append(c.added, nts[j]), append(c.lcps, nls[j])
			}
			i++
			j++
		}
	}
	return c
}

// queueTermChanges queues the statements that make the search term
// changes of cs, a write's or a group's (one statement each for all
// their terms dropped and all their terms added), after the puts'
// writes: nothing when none of them changes a term.
//
// A term added that is stored already (none should be: the terms
// dropped are those of the supplier's stored record) takes the new
// lcp_prev rather than failing the put.
func queueTermChanges(b *pgx.Batch, community string, cs []termChanges) {
	var dropIDs, addIDs []uuid.UUID
	var dropped, added []string
	var lcps []int32
	for _, c := range cs {
		for _, t := range c.dropped {
			dropIDs, dropped = append(dropIDs, c.id), append(dropped, t)
		}
		for k, t := range c.added {
			addIDs, added, lcps = append(addIDs, c.id), append(added, t), append(lcps, c.lcps[k])
		}
	}
	if len(dropped) > 0 {
		b.Queue(`DELETE FROM supplier_terms t USING unnest($2::uuid[], $3::text[]) AS d(id, term)
			WHERE t.community_id = $1 AND t.term = d.term AND t.supplier_id = d.id`, community, dropIDs, dropped)
	}
	if len(added) > 0 {
		b.Queue(`INSERT INTO supplier_terms (community_id, term, supplier_id, lcp_prev)
			SELECT $1, a.term, a.id, a.lcp FROM unnest($2::uuid[], $3::text[], $4::int4[]) AS a(id, term, lcp)
			ON CONFLICT (community_id, term, supplier_id) DO UPDATE SET lcp_prev = excluded.lcp_prev`, community, addIDs, added, lcps)
	}
}

// PutSupplier creates or replaces a supplier's detail and keywords
// (supplier.Writer). Its contacts and addresses are kept.
//
// The detail's default contact and default remittance address are stamped
// with the supplier: one whose content is unchanged keeps its dates; one
// that changed gets the write's modifiedDate, and keeps its createdDate
// when its id is the stored one's.
//
// The write is planned outside the community's lock first
// (runOptimistic); when another write moved what it rests on, it is
// redone under the lock (runWrite).
func (s *Store) PutSupplier(ctx context.Context, community string, r supplier.Record) (supplier.Detail, error) {
	defer s.timeWrite("PutSupplier", time.Now())
	defer s.cache.writing(community)() // to its own (cache.go: reader)
	if err := r.ValidateWrite(); err != nil {
		return supplier.Detail{}, err
	}
	r = r.Clone() // the caller's stays as it is
	r.Normalize()
	var put supplierPut
	err := s.putSupplierOptimistic(ctx, community, r.Clone(), &put) // each try dates its copy in place
	if errors.Is(err, errRaced) {
		put = supplierPut{}
		err = s.putSupplierLocked(ctx, community, r.Clone(), &put)
	}
	if err != nil {
		return supplier.Detail{}, writeError("put supplier", err)
	}
	if s.afterCommit != nil {
		s.afterCommit() // tests: the gap between the commit and own
	}
	s.cache.own(community, put.own)
	s.splitLater(ctx, community, put.split)
	return put.out, nil
}

// supplierPut is a put of a supplier as planned: what it returns, what
// it does to the node's cache, and the buckets it grew past their size.
type supplierPut struct {
	out   supplier.Detail
	own   ownWrite
	split []bucketRef
	// deltas are the put's bucket changes, for its caller to queue with
	// the community's mark and count (queueCounts; a group's, once for
	// the group).
	deltas []bucketDelta
	// terms is what the put changes of the search terms, for its caller
	// to queue after its writes (queueTermChanges; a group's, once for
	// the group).
	terms termChanges
}

// noop reports whether putting r over old (found: there is one) changes
// nothing; then it is what the put returns and tells the cache: the
// stored supplier, and mark, the state it was read from.
func (p *supplierPut) noop(r, old *supplier.Record, found bool, mark time.Time) bool {
	if !unchangedSupplier(r, old, found) {
		return false
	}
	p.out = old.Detail
	p.own = ownWrite{stamp: mark} // what the node showed: its next read shows no less
	return true
}

// unchangedSupplier reports whether putting r over old (found: there is
// one) changes nothing.
func unchangedSupplier(r, old *supplier.Record, found bool) bool {
	return found && old.EqualContent(&r.Detail) && slices.Equal(old.Keywords, r.Keywords)
}

// plan queues into b the writes that put r, stamped stamp, over old (nil:
// none), but the counts they change (queueCounts: the community's mark and
// count, and p.deltas), and fills p; the caller sets p.own.prev. r is
// dated in place. It returns the details document it writes (nil: none).
func (p *supplierPut) plan(b *pgx.Batch, community string, r, old *supplier.Record, stamp time.Time) ([]byte, error) {
	r.StampWrite(detailOf(old), stamp)
	det, err := detailsJSON(&r.Detail)
	if err != nil {
		return nil, err
	}
	b.Queue(upsertSupplierSQL, rowWithDetails(community, r, det)...)
	p.terms = changedTerms(old, r)
	var oldKeys *supplierKeys
	if old != nil {
		oldKeys = keysOf(old.Name.String(), old.CreatedDate, old.ModifiedDate)
	}
	p.deltas = stampKeys(keyDeltas(oldKeys, keysOf(r.Name.String(), r.CreatedDate, r.ModifiedDate)), stamp)
	p.result(r, stamp)
	return det, nil
}

// result sets what the put returns and does to the cache from r, stamped
// stamp; p.own.prev is left to the caller.
func (p *supplierPut) result(r *supplier.Record, stamp time.Time) {
	p.out = r.Detail
	// The cache's copy: the caller owns out.
	rec := supplier.Record{Detail: r.Detail.Clone(), Keywords: slices.Clone(r.Keywords)}
	p.own = ownWrite{stamp: stamp, apply: func(ix *supplierindex.Index) {
		if cur, ok := ix.Record(rec.ID); ok {
			rec.Contacts, rec.RemittanceAddresses = cur.Contacts, cur.RemittanceAddresses
		}
		ix.Apply([]supplier.Record{rec}, nil)
	}}
}

// stampedInDetails counts the dates of d's details (its default contact
// and address) that are stamp.
func stampedInDetails(d *supplier.Detail, stamp time.Time) int {
	return countEqual(stamp, detailsDates(d, nil)...)
}

// detailsDates appends to ts the dates of d's details document: its
// default contact's and address's.
func detailsDates(d *supplier.Detail, ts []time.Time) []time.Time {
	if c := d.DefaultContact; c != nil {
		ts = append(ts, c.ModifiedDate, c.CreatedDate)
	}
	if a := d.DefaultRemittanceAddress; a != nil {
		ts = append(ts, a.ModifiedDate, a.CreatedDate)
	}
	return ts
}

// countEqual counts the ts equal to t.
func countEqual(t time.Time, ts ...time.Time) int {
	n := 0
	for _, x := range ts {
		if x.Equal(t) {
			n++
		}
	}
	return n
}

// putSupplierOptimistic is the put planned outside the lock
// (runOptimistic), from the node's cache when it serves the community and
// shows the put to change something, or errRaced.
func (s *Store) putSupplierOptimistic(ctx context.Context, community string, r supplier.Record, p *supplierPut) error {
	var old supplier.Record
	var found bool
	o := optimistic{supplierID: r.ID}
	var read *pgx.Batch
	if b, ok := s.cache.writeBase(community, r.ID); ok && !unchangedSupplier(&r, &b.rec, b.found) {
		old, found = b.rec, b.found // the cache's: read only
		var modified *time.Time
		if found {
			modified = &old.ModifiedDate
		}
		o.useCache(&b, modified)
	} else {
		read = &pgx.Batch{}
		read.Queue(loadRecordSQL, community, r.ID).Query(func(rows pgx.Rows) error {
			var err error
			old, found, err = collectRecord(rows)
			if found {
				o.modified = &old.ModifiedDate
			}
			return err
		})
		o.queue(read, community)
	}
	var oldP *supplier.Record
	err := s.runOptimistic(ctx, community, &o, read, func() (*pgx.Batch, error) {
		if p.noop(&r, &old, found, o.mark()) {
			return nil, nil
		}
		stamp, err := o.stampWrite()
		if err != nil {
			return nil, err
		}
		if found {
			oldP = &old
		}
		b := &pgx.Batch{}
		det, err := p.plan(b, community, &r, oldP, stamp)
		if err != nil {
			return nil, err
		}
		if !stampsInDoc(det, stamp, stampedInDetails(&r.Detail, stamp)) {
			return nil, errRaced // a text value is the stamp's JSON: the locked way
		}
		o.buckets, o.split = p.deltas, &p.split
		o.terms = p.terms
		return b, nil
	})
	if err != nil || p.own.apply == nil {
		return err
	}
	if !o.made.Equal(o.planned) {
		// StampWrite decides by content, never by r's dates: stamping
		// r again gives the dates the guard's stamp gave the database.
		r.StampWrite(detailOf(oldP), o.made)
		p.result(&r, o.made)
	}
	p.own.prev = o.lockedMark()
	return nil
}

// detailOf is &r.Detail, or nil.
func detailOf(r *supplier.Record) *supplier.Detail {
	if r == nil {
		return nil
	}
	return &r.Detail
}

// putSupplierLocked is the put planned under the lock (runWrite).
func (s *Store) putSupplierLocked(ctx context.Context, community string, r supplier.Record, p *supplierPut) error {
	var old supplier.Record
	var found bool
	var lk communityLock
	first := beginWrite()
	lk.queue(first, community)
	first.Queue(loadRecordSQL, community, r.ID).Query(func(rows pgx.Rows) error {
		var err error
		old, found, err = collectRecord(rows)
		return err
	})
	return s.runWrite(ctx, community, first, func() (*pgx.Batch, error) {
		if err := lk.known(community); err != nil {
			return nil, err
		}
		if p.noop(&r, &old, found, lk.mark()) {
			return nil, nil
		}
		stamp, err := lk.next()
		if err != nil {
			return nil, err
		}
		b := &pgx.Batch{}
		queueSetStamp(b, stamp)
		var oldP *supplier.Record
		if found {
			oldP = &old
		}
		if _, err := p.plan(b, community, &r, oldP, stamp); err != nil {
			return nil, err
		}
		added := 0
		if oldP == nil {
			added = 1
		}
		queueTermChanges(b, community, []termChanges{p.terms})
		queueCounts(b, community, added, p.deltas, &p.split)
		p.own.prev = lk.mark()
		return b, nil
	})
}

// writeError wraps the error of a write: sentinels and validation errors
// stay matchable. Validation errors and supplier.ErrStampExhausted, whose
// text the admin API shows, come back as they are, worded as memstore's.
func writeError(op string, err error) error {
	var verr *procure.ValidationError
	if errors.As(err, &verr) || errors.Is(err, supplier.ErrStampExhausted) {
		return err
	}
	return fmt.Errorf("pgstore: %s: %w", op, err)
}

// DeleteSupplier removes a supplier with its contacts and remittance
// addresses (supplier.Writer). Nothing the API shows is stamped: the
// supplier is gone. The change feed of the caches gets a tombstone,
// stamped as a write would be (cache.go).
func (s *Store) DeleteSupplier(ctx context.Context, community string, id uuid.UUID) error {
	defer s.timeWrite("DeleteSupplier", time.Now())
	defer s.cache.writing(community)() // to its own (cache.go: reader)
	var lk communityLock
	var keys *supplierKeys
	var own ownWrite
	first := beginWrite()
	lk.queue(first, community)
	first.Queue(`DELETE FROM suppliers WHERE community_id = $1 AND id = $2 RETURNING name, created_date, modified_date`,
		community, id).Query(func(rows pgx.Rows) error { return scanKeys(rows, &keys) })
	err := s.runWrite(ctx, community, first, func() (*pgx.Batch, error) {
		if err := lk.known(community); err != nil {
			return nil, err
		}
		if keys == nil {
			return nil, fmt.Errorf("supplier %s: %w", id, supplier.ErrNotFound)
		}
		stamp, err := lk.next()
		if err != nil {
			return nil, err
		}
		b := &pgx.Batch{}
		var split []bucketRef // a count that falls splits nothing
		queueBucketDeltas(b, community, keyDeltas(keys, nil), &split)
		for _, table := range []string{"supplier_terms", "supplier_contacts", "remittance_addresses"} {
			b.Queue(`DELETE FROM `+table+` WHERE community_id = $1 AND supplier_id = $2`, community, id)
		}
		// The change feed of the caches (cache.go): a tombstone stamped as
		// a write, in the high-water mark's sequence.
		b.Queue(`UPDATE communities SET supplier_count = supplier_count - 1, last_modified = $2 WHERE id = $1`, community, stamp)
		b.Queue(`INSERT INTO supplier_tombstones (community_id, deleted_at, id) VALUES ($1, $2, $3)`, community, stamp, id)
		b.Queue(`DELETE FROM supplier_tombstones WHERE community_id = $1 AND deleted_at < $2`, community, stamp.Add(-tombstoneRetention))
		own = ownWrite{prev: lk.mark(), stamp: stamp, apply: func(ix *supplierindex.Index) { ix.Apply(nil, []uuid.UUID{id}) }}
		return b, nil
	})
	if err != nil {
		return writeError("delete supplier", err)
	}
	s.cache.own(community, own)
	return nil
}

// scanKeys reads the name, createdDate and modifiedDate of at most one
// supplier into *keys (left nil when there is none).
func scanKeys(rows pgx.Rows, keys **supplierKeys) error {
	for rows.Next() {
		var name *string
		var created, modified time.Time
		if err := rows.Scan(&name, &created, &modified); err != nil {
			return err
		}
		*keys = keysOf(deref(name), created, modified)
	}
	return rows.Err()
}

// supplierLock is a community's lock (communityLock) and the sort keys of
// one of its suppliers, queued into a batch.
type supplierLock struct {
	communityLock
	keys *supplierKeys
}

// queue queues the lock and the read of the supplier's keys.
func (sl *supplierLock) queue(b *pgx.Batch, community string, id uuid.UUID) {
	sl.communityLock.queue(b, community)
	b.Queue(`SELECT name, created_date, modified_date FROM suppliers WHERE community_id = $1 AND id = $2`, community, id).
		Query(func(rows pgx.Rows) error { return scanKeys(rows, &sl.keys) })
}

// found returns nil, or an error matching procure.ErrUnknownCommunity or
// supplier.ErrNotFound. The write's stamp is sl.next().
func (sl *supplierLock) found(community string, id uuid.UUID) error {
	if err := sl.known(community); err != nil {
		return err
	}
	if sl.keys == nil {
		return fmt.Errorf("supplier %s: %w", id, supplier.ErrNotFound)
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// queueCounts queues, after a write's statements, the counts it changes:
// the community's high-water mark (the write's stamp) and its count of
// suppliers, up by added, and the bucket counts (queueBucketDeltas: ds,
// and split for the buckets to split). A write under the lock queues its
// own; the puts of a group (write_group.go) share one after all of
// theirs, with the last put's stamp (the group's latest), the sum of
// their additions and all their keys: a put's guard reads the mark of the
// puts before it in the transaction from the stamp setting instead
// (guardSQL), so the community's row is written once a group rather
// than once a put.
func queueCounts(b *pgx.Batch, community string, added int, ds []bucketDelta, split *[]bucketRef) {
	b.Queue(`UPDATE communities SET last_modified = `+stampSQL+`, supplier_count = supplier_count + $2 WHERE id = $1`, community, added)
	queueBucketDeltas(b, community, ds, split)
}

// queueStampSupplier queues the statements that stamp a supplier whose
// contact or address changed (its keys were old). It returns the bucket
// changes, for the caller to queue with the community's mark
// (queueCounts).
func queueStampSupplier(b *pgx.Batch, community string, id uuid.UUID, old *supplierKeys, stamp time.Time) []bucketDelta {
	b.Queue(`UPDATE suppliers SET modified_date = `+stampSQL+` WHERE community_id = $1 AND id = $2`, community, id)
	nk := *old
	nk.modified = stamp
	return stampKeys(keyDeltas(old, &nk), stamp)
}

// queueLoadDoc queues the read of one contact or address document into
// *v; *found tells whether there is one.
func queueLoadDoc[T any](b *pgx.Batch, table, community string, supplierID, id uuid.UUID, v *T, found *bool) {
	b.Queue(`SELECT doc FROM `+table+` WHERE community_id = $1 AND supplier_id = $2 AND id = $3`,
		community, supplierID, id).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var raw []byte
			if err := rows.Scan(&raw); err != nil {
				return err
			}
			if err := json.Unmarshal(raw, v); err != nil {
				return err
			}
			*found = true
		}
		return rows.Err()
	})
}

// PutContact creates or replaces a contact of a supplier and stamps the
// supplier too when it changes (supplier.Writer).
func (s *Store) PutContact(ctx context.Context, community string, supplierID uuid.UUID, c supplier.Contact) (supplier.Contact, error) {
	defer s.timeWrite("PutContact", time.Now())
	if err := supplier.ValidateContact(&c); err != nil {
		return supplier.Contact{}, err
	}
	c = c.Clone()
	return putChild(s, ctx, community, supplierID, c, contactChildren)
}

// DeleteContact removes a contact and stamps its supplier
// (supplier.Writer).
func (s *Store) DeleteContact(ctx context.Context, community string, supplierID, id uuid.UUID) error {
	defer s.timeWrite("DeleteContact", time.Now())
	return s.deleteChild(ctx, "supplier_contacts", "contact", community, supplierID, id)
}

// PutRemittanceAddress creates or replaces a remittance address of a
// supplier and stamps the supplier too when it changes (supplier.Writer).
func (s *Store) PutRemittanceAddress(ctx context.Context, community string, supplierID uuid.UUID, a supplier.RemittanceAddress) (supplier.RemittanceAddress, error) {
	defer s.timeWrite("PutRemittanceAddress", time.Now())
	if err := supplier.ValidateRemittanceAddress(&a); err != nil {
		return supplier.RemittanceAddress{}, err
	}
	a = a.Clone()
	return putChild(s, ctx, community, supplierID, a, addressChildren)
}

// childTable describes a table of a supplier's children (contacts or
// remittance addresses) to putChild.
type childTable[T any] struct {
	table, kind string
	id          func(*T) uuid.UUID
	same        func(a, b *T) bool               // equal but for dates (EqualContent)
	stamp       func(v, old *T, stamp time.Time) // StampWrite
	dates       func(v *T) []time.Time           // v's dates
	// of and with read and set the supplier's list (the cache's own
	// writes).
	of   func(r *supplier.Record) []T
	with func(r *supplier.Record, l []T)
	// upsert queues the write of v, whose JSON is doc.
	upsert func(b *pgx.Batch, community string, supplierID uuid.UUID, v *T, doc string) // doc: JSON, as a string (see supplierRow)
}

var (
	contactChildren = childTable[supplier.Contact]{
		table: "supplier_contacts", kind: "contact",
		id:    func(c *supplier.Contact) uuid.UUID { return c.ID },
		same:  (*supplier.Contact).EqualContent,
		stamp: (*supplier.Contact).StampWrite,
		dates: func(c *supplier.Contact) []time.Time { return []time.Time{c.ModifiedDate, c.CreatedDate} },
		of:    func(r *supplier.Record) []supplier.Contact { return r.Contacts },
		with:  func(r *supplier.Record, l []supplier.Contact) { r.Contacts = l },
		upsert: func(b *pgx.Batch, community string, supplierID uuid.UUID, c *supplier.Contact, doc string) {
			b.Queue(`INSERT INTO supplier_contacts (community_id, supplier_id, id, name_key, doc) VALUES ($1, $2, $3, $4, `+restampJSONSQL("$5::text")+`::json)
			ON CONFLICT (community_id, supplier_id, id) DO UPDATE SET name_key = excluded.name_key, doc = excluded.doc`,
				community, supplierID, c.ID, nullKey(c.Name), doc)
		},
	}
	addressChildren = childTable[supplier.RemittanceAddress]{
		table: "remittance_addresses", kind: "remittance address",
		id:    func(a *supplier.RemittanceAddress) uuid.UUID { return a.ID },
		same:  (*supplier.RemittanceAddress).EqualContent,
		stamp: (*supplier.RemittanceAddress).StampWrite,
		dates: func(a *supplier.RemittanceAddress) []time.Time { return []time.Time{a.ModifiedDate, a.CreatedDate} },
		of:    func(r *supplier.Record) []supplier.RemittanceAddress { return r.RemittanceAddresses },
		with:  func(r *supplier.Record, l []supplier.RemittanceAddress) { r.RemittanceAddresses = l },
		upsert: func(b *pgx.Batch, community string, supplierID uuid.UUID, a *supplier.RemittanceAddress, doc string) {
			b.Queue(`INSERT INTO remittance_addresses (community_id, supplier_id, id, company_name_key, modified_date, doc)
			VALUES ($1, $2, $3, $4, `+restampSQL("$5::timestamptz")+`, `+restampJSONSQL("$6::text")+`::json)
			ON CONFLICT (community_id, supplier_id, id) DO UPDATE SET company_name_key = excluded.company_name_key,
				modified_date = excluded.modified_date, doc = excluded.doc`,
				community, supplierID, a.ID, nullKey(a.CompanyName.String()), a.ModifiedDate, doc)
		},
	}
)

// putChild writes v, validated and copied, into the table t: an equal
// one (dates aside) is returned as stored and stamps nothing; otherwise v
// and its supplier get the stamp, and a replaced one keeps its
// createdDate. It is planned outside the community's lock first
// (runOptimistic) and redone under it (runWrite) when another write moved
// what it rests on.
func putChild[T any](s *Store, ctx context.Context, community string, supplierID uuid.UUID, v T, t childTable[T]) (T, error) {
	defer s.cache.writing(community)() // to its own (cache.go: reader)
	var put childPut[T]
	err := put.optimistic(s, ctx, community, supplierID, v, t)
	if errors.Is(err, errRaced) {
		put = childPut[T]{}
		err = put.locked(s, ctx, community, supplierID, v, t)
	}
	if err != nil {
		var zero T
		return zero, writeError("put "+t.kind, err)
	}
	s.cache.own(community, put.own)
	s.splitLater(ctx, community, put.split)
	return put.out, nil
}

// childPut is a put of a contact or address as planned (supplierPut).
type childPut[T any] struct {
	out    T
	own    ownWrite
	split  []bucketRef
	deltas []bucketDelta
}

// noop reports whether putting v over old (found: there is one) changes
// nothing (supplierPut.noop).
func (p *childPut[T]) noop(t childTable[T], v, old *T, found bool, mark time.Time) bool {
	if !found || !t.same(old, v) {
		return false
	}
	p.out = *old
	p.own = ownWrite{stamp: mark}
	return true
}

// plan queues into b the writes that put v over old (nil: none) and
// stamp its supplier, whose keys are keys, but the counts they change
// (queueCounts: the community's mark, and p.deltas), and fills p but
// p.own.prev.
// v is dated in place. It returns the document it writes.
func (p *childPut[T]) plan(b *pgx.Batch, t childTable[T], community string, supplierID uuid.UUID, v, old *T, keys *supplierKeys, stamp time.Time) ([]byte, error) {
	t.stamp(v, old, stamp)
	doc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	t.upsert(b, community, supplierID, v, string(doc))
	p.deltas = queueStampSupplier(b, community, supplierID, keys, stamp)
	return doc, p.result(t, supplierID, v, doc, stamp)
}

// result sets what the put returns and does to the cache from v, stamped
// stamp, whose JSON is doc; p.own.prev is left to the caller.
func (p *childPut[T]) result(t childTable[T], supplierID uuid.UUID, v *T, doc []byte, stamp time.Time) error {
	p.out = *v
	// The cache's copy (the caller owns out): JSON, as the database
	// holds it.
	var kept T
	if err := json.Unmarshal(doc, &kept); err != nil {
		return err
	}
	p.own = ownWrite{stamp: stamp, apply: func(ix *supplierindex.Index) {
		cur, ok := ix.Record(supplierID)
		if !ok {
			return
		}
		list := slices.Clone(t.of(&cur))
		if i := slices.IndexFunc(list, func(x T) bool { return t.id(&x) == t.id(&kept) }); i >= 0 {
			list[i] = kept
		} else {
			list = append(list, kept)
		}
		cur.ModifiedDate = stamp
		t.with(&cur, list)
		ix.Apply([]supplier.Record{cur}, nil)
	}}
	return nil
}

// optimistic is the put planned outside the lock, from the node's cache
// when it holds the supplier and shows the put to change something
// (putSupplierOptimistic), or errRaced.
func (p *childPut[T]) optimistic(s *Store, ctx context.Context, community string, supplierID uuid.UUID, v T, t childTable[T]) error {
	var old T
	var found bool
	var keys *supplierKeys
	o := optimistic{supplierID: supplierID}
	var read *pgx.Batch
	if b, ok := s.cache.writeBase(community, supplierID); ok && b.found && t.cachedBase(&b, &v, &old, &found) {
		r := &b.rec
		keys = keysOf(r.Name.String(), r.CreatedDate, r.ModifiedDate)
		var dates []time.Time
		if found {
			dates = t.dates(&old)
		}
		o.useCache(&b, &r.ModifiedDate, dates...)
	} else {
		read = &pgx.Batch{}
		read.Queue(`SELECT name, created_date, modified_date FROM suppliers WHERE community_id = $1 AND id = $2`, community, supplierID).
			Query(func(rows pgx.Rows) error { return scanKeys(rows, &keys) })
		queueLoadDoc(read, t.table, community, supplierID, t.id(&v), &old, &found)
		o.queue(read, community)
	}
	var oldP *T
	err := s.runOptimistic(ctx, community, &o, read, func() (*pgx.Batch, error) {
		if keys == nil {
			return nil, fmt.Errorf("supplier %s: %w", supplierID, supplier.ErrNotFound)
		}
		o.modified = &keys.modified
		if p.noop(t, &v, &old, found, o.mark()) {
			return nil, nil
		}
		stamp, err := o.stampWrite()
		if err != nil {
			return nil, err
		}
		if found {
			oldP = &old
		}
		b := &pgx.Batch{}
		doc, err := p.plan(b, t, community, supplierID, &v, oldP, keys, stamp)
		if err != nil {
			return nil, err
		}
		if !stampsInDoc(doc, stamp, countEqual(stamp, t.dates(&v)...)) {
			return nil, errRaced // a text value is the stamp's JSON: the locked way
		}
		o.buckets, o.split = p.deltas, &p.split
		return b, nil
	})
	if err != nil || p.own.apply == nil {
		return err
	}
	if !o.made.Equal(o.planned) {
		t.stamp(&v, oldP, o.made) // by the old one, never by v's dates (supplierPut)
		doc, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := p.result(t, supplierID, &v, doc, o.made); err != nil {
			return err
		}
	}
	p.own.prev = o.lockedMark()
	return nil
}

// cachedBase sets *old and *found to the part of b's record with v's id,
// and reports whether the put may be planned from b: false when the part
// is unchanged by v (a no-op is decided from the database). *old shares
// its slices with the cache: the plan reads it only (its createdDate).
func (t childTable[T]) cachedBase(b *cacheBase, v, old *T, found *bool) bool {
	list := t.of(&b.rec)
	i := slices.IndexFunc(list, func(x T) bool { return t.id(&x) == t.id(v) })
	if i < 0 {
		return true
	}
	if t.same(&list[i], v) {
		return false
	}
	*old, *found = list[i], true
	return true
}

// locked is the put planned under the lock.
func (p *childPut[T]) locked(s *Store, ctx context.Context, community string, supplierID uuid.UUID, v T, t childTable[T]) error {
	var old T
	var found bool
	var sl supplierLock
	first := beginWrite()
	sl.queue(first, community, supplierID)
	queueLoadDoc(first, t.table, community, supplierID, t.id(&v), &old, &found)
	return s.runWrite(ctx, community, first, func() (*pgx.Batch, error) {
		if err := sl.found(community, supplierID); err != nil {
			return nil, err
		}
		if p.noop(t, &v, &old, found, sl.mark()) {
			return nil, nil
		}
		stamp, err := sl.next()
		if err != nil {
			return nil, err
		}
		var oldP *T
		if found {
			oldP = &old
		}
		b := &pgx.Batch{}
		queueSetStamp(b, stamp)
		if _, err := p.plan(b, t, community, supplierID, &v, oldP, sl.keys, stamp); err != nil {
			return nil, err
		}
		queueCounts(b, community, 0, p.deltas, &p.split)
		p.own.prev = sl.mark()
		return b, nil
	})
}

// DeleteRemittanceAddress removes a remittance address and stamps its
// supplier (supplier.Writer).
func (s *Store) DeleteRemittanceAddress(ctx context.Context, community string, supplierID, id uuid.UUID) error {
	defer s.timeWrite("DeleteRemittanceAddress", time.Now())
	return s.deleteChild(ctx, "remittance_addresses", "remittance address", community, supplierID, id)
}

func (s *Store) deleteChild(ctx context.Context, table, kind, community string, supplierID, id uuid.UUID) error {
	defer s.cache.writing(community)() // to its own (cache.go: reader)
	var sl supplierLock
	var deleted int64
	var split []bucketRef
	var own ownWrite
	first := beginWrite()
	sl.queue(first, community, supplierID)
	first.Queue(`DELETE FROM `+table+` WHERE community_id = $1 AND supplier_id = $2 AND id = $3`, community, supplierID, id).
		Exec(func(tag pgconn.CommandTag) error {
			deleted = tag.RowsAffected()
			return nil
		})
	err := s.runWrite(ctx, community, first, func() (*pgx.Batch, error) {
		if err := sl.found(community, supplierID); err != nil {
			return nil, err
		}
		if deleted == 0 {
			return nil, fmt.Errorf("%s %s of supplier %s: %w", kind, id, supplierID, supplier.ErrNotFound)
		}
		stamp, err := sl.next()
		if err != nil {
			return nil, err
		}
		b := &pgx.Batch{}
		queueSetStamp(b, stamp)
		queueCounts(b, community, 0, queueStampSupplier(b, community, supplierID, sl.keys, stamp), &split)
		own = ownWrite{prev: sl.mark(), stamp: stamp, apply: func(ix *supplierindex.Index) {
			cur, ok := ix.Record(supplierID)
			if !ok {
				return
			}
			if table == contactChildren.table {
				cur.Contacts = slices.DeleteFunc(slices.Clone(cur.Contacts), func(c supplier.Contact) bool { return c.ID == id })
			} else {
				cur.RemittanceAddresses = slices.DeleteFunc(slices.Clone(cur.RemittanceAddresses), func(a supplier.RemittanceAddress) bool { return a.ID == id })
			}
			cur.ModifiedDate = stamp
			ix.Apply([]supplier.Record{cur}, nil)
		}}
		return b, nil
	})
	if err != nil {
		return writeError("delete "+kind, err)
	}
	s.cache.own(community, own)
	s.splitLater(ctx, community, split)
	return nil
}
