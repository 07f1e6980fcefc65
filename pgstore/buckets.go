package pgstore

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/internal/textkey"
	"github.com/procurekit/procure/paging"
)

// Deep pages of the unfiltered supplier list.
//
// An OFFSET walks the index entry by entry, so page 1,000 of size 20 reads
// 20,020 entries where page 0 reads 20. To skip most of that walk, each
// community's keys of each order are cut into buckets of about
// bucketSize consecutive keys (table supplier_buckets: a bucket holds the
// keys from its lo up to the next bucket's lo, and counts them). The
// counts are exact: every supplier write adjusts them in its transaction,
// under the community's row lock that already serialises the community's
// writes. A deep page then reads the bucket its offset falls in (one
// window sum over a thousand rows at 1,000,000 suppliers), and walks the
// index from that bucket's first key for at most one bucket's worth of
// entries. Bucket boundaries fall only between distinct keys, so the one
// set of buckets serves the ascending and descending order of a field (ties
// break on id ascending in both). A bucket that grows past twice the size
// is split at its middle key in the write that grows it; one that shrinks
// stays (an import rebuilds them all).
//
// Keys are text whose byte order is the order's: the name's sort key
// (bytea) in hex (names that are empty, NULL keys, are not in buckets:
// they come last in both directions, and a page that reaches them is read
// the plain way), and dates encoded by dateKey.

// bucketSize is the number of keys a bucket is cut to; tests lower it.
var bucketSize = 1000

// bucketOrds are the orders of the supplier list that have buckets.
const (
	ordName     = 0
	ordCreated  = 1
	ordModified = 2
)

// dateKey encodes t as 20 decimal digits whose byte order is time order
// (microseconds since 1970, shifted to be positive).
func dateKey(t time.Time) string { return fmt.Sprintf("%020d", t.UnixMicro()+1<<62) }

// dateKeySQL is dateKey in SQL, over the expression e.
func dateKeySQL(e string) string {
	return `lpad(((extract(epoch FROM ` + e + `) * 1000000)::bigint + 4611686018427387904)::text, 20, '0')`
}

func parseDateKey(k string) (time.Time, error) {
	n, err := strconv.ParseInt(k, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMicro(n - 1<<62).UTC(), nil
}

// bucketKeySQL is the key expression of ord over the suppliers table
// aliased t.
func bucketKeySQL(ord int, t string) string {
	switch ord {
	case ordName:
		return "encode(" + t + ".name_key, 'hex')"
	case ordCreated:
		return dateKeySQL(t + ".created_date")
	}
	return dateKeySQL(t + ".modified_date")
}

// bucketColumn is the suppliers column ord sorts on.
func bucketColumn(ord int) string {
	return [...]string{"name_key", "created_date", "modified_date"}[ord]
}

// bucketArg turns a bucket key into the value its column compares with.
func bucketArg(ord int, k string) (any, error) {
	if ord == ordName {
		return hex.DecodeString(k)
	}
	return parseDateKey(k)
}

// rebuildBucketsSQL recomputes every bucket of the communities that $1
// names (an array), cutting each order's keys into runs of about
// bucketSize ($2) at distinct keys; the first bucket of each starts at ”
// so that any later key has a bucket.
func rebuildBucketsSQL(ord int) string {
	return `INSERT INTO supplier_buckets (community_id, ord, lo, n)
		SELECT community_id, ` + strconv.Itoa(ord) + `, CASE WHEN b = 0 THEN '' ELSE min(k) END, sum(c)
		FROM (SELECT community_id, k, c, floor((sum(c) OVER (PARTITION BY community_id ORDER BY k) - c) / $2) AS b
			FROM (SELECT t.community_id, ` + bucketKeySQL(ord, "t") + ` COLLATE "C" AS k, count(*) AS c FROM suppliers t
				WHERE t.community_id = ANY($1) AND ` + bucketKeySQL(ord, "t") + ` IS NOT NULL GROUP BY 1, 2) g) x
		GROUP BY community_id, b`
}

// rebuildBuckets recomputes the buckets of the communities.
func rebuildBuckets(ctx context.Context, tx pgx.Tx, communities []string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM supplier_buckets WHERE community_id = ANY($1)`, communities); err != nil {
		return err
	}
	for ord := range 3 {
		if _, err := tx.Exec(ctx, rebuildBucketsSQL(ord), communities, int64(bucketSize)); err != nil {
			return fmt.Errorf("buckets: %w", err)
		}
	}
	return nil
}

// bucketDelta is a change of one key's count.
type bucketDelta struct {
	ord   int
	key   string
	delta int
}

// keyDeltas returns the bucket changes of a supplier whose keys go from
// old (nil: it did not exist) to new (nil: it is deleted). Keys are the
// name's sort key (nil when empty) and the two dates; a key that stays
// the same changes nothing.
func keyDeltas(old, new *supplierKeys) []bucketDelta {
	var out []bucketDelta
	move := func(ord int, from, to *string) {
		if from != nil && to != nil && *from == *to {
			return
		}
		if from != nil {
			out = append(out, bucketDelta{ord, *from, -1})
		}
		if to != nil {
			out = append(out, bucketDelta{ord, *to, 1})
		}
	}
	var names, created, modified [2]*string
	for i, k := range []*supplierKeys{old, new} {
		if k == nil {
			continue
		}
		names[i] = k.name
		c, m := dateKey(k.created), dateKey(k.modified)
		created[i], modified[i] = &c, &m
	}
	move(ordName, names[0], names[1])
	move(ordCreated, created[0], created[1])
	move(ordModified, modified[0], modified[1])
	return out
}

// supplierKeys are a supplier's sort keys.
type supplierKeys struct {
	name              *string
	created, modified time.Time
}

func keysOf(name string, created, modified time.Time) *supplierKeys {
	k := &supplierKeys{created: created, modified: modified}
	if name != "" {
		n := hex.EncodeToString(textkey.SortKey(name))
		k.name = &n
	}
	return k
}

// lastKey stands, in a bucket delta of a date order, for the key of the
// write's stamp: it counts in the order's last bucket. A stamp is later
// than every date the community holds (the high-water mark is at least
// each of them, and the stamp is after the mark), and every bucket starts
// at such a date (or at the empty key), so the stamp's key falls in the
// last bucket, whichever stamp the guard gives a write planned outside
// the lock (write_fast.go): its key is not known when the write is
// planned, nor in a group's statement, which counts the keys of several
// stamps (write_group.go). '~' sorts after every key (digits and hex
// digits, in byte order), so "the last bucket that starts at or before
// the key" finds it with the same lookup.
const lastKey = "~"

// stampKeys returns ds with the keys of the date orders that are the
// stamp's (a date the write set) replaced by lastKey.
func stampKeys(ds []bucketDelta, stamp time.Time) []bucketDelta {
	k := dateKey(stamp)
	for i := range ds {
		if ds[i].ord != ordName && ds[i].key == k {
			ds[i].key = lastKey
		}
	}
	return ds
}

// mergeDeltas sums the changes of each key (of one write, or of a group's
// writes) and drops those that come to nothing, in key order.
func mergeDeltas(ds []bucketDelta) []bucketDelta {
	out := slices.Clone(ds)
	slices.SortFunc(out, func(a, b bucketDelta) int {
		return cmp.Or(cmp.Compare(a.ord, b.ord), strings.Compare(a.key, b.key))
	})
	kept := out[:0]
	for _, d := range out {
		if n := len(kept); n > 0 && kept[n-1].ord == d.ord && kept[n-1].key == d.key {
			kept[n-1].delta += d.delta
			if kept[n-1].delta == 0 {
				kept = kept[:n-1]
			}
			continue
		}
		if d.delta != 0 {
			kept = append(kept, d)
		}
	}
	return kept
}

// deltaRows is the number of rows of the VALUES list that carries n
// changes: n up to 8 (one write has at most six), then a multiple of 8,
// so that the groups' statements (write_group.go) come in a few lengths,
// each prepared once a connection. The rows past n change nothing.
func deltaRows(n int) int {
	if n <= 8 {
		return n
	}
	return (n + 7) / 8 * 8
}

// queueBucketDeltas queues the count changes, in one statement; the
// buckets that grow past twice bucketSize are appended to *split when the
// batch runs (split nil: none is split now; the next write that grows one
// splits it). The keys of a write's stamp are lastKey (stampKeys).
//
// One statement, not one per key: a put runs it under the community's
// lock, and four statements (two orders, a key out and a key in) cost
// twice what one does. A group of puts (write_group.go) sends one for
// all its puts: the statement's cost is mostly its own, not its keys'
// (bench/README.md, session 25). The keys are summed per bucket first,
// since an upsert cannot change one row twice; a bucket whose sum is zero
// (the key moved within it) is left alone.
func queueBucketDeltas(b *pgx.Batch, community string, ds []bucketDelta, split *[]bucketRef) {
	ds = mergeDeltas(ds)
	if len(ds) == 0 {
		return
	}
	// The keys as a VALUES list, not arrays: PostgreSQL plans a statement
	// over unnest($arrays) anew on every execution (a generic plan cannot
	// know the arrays' length and looks costlier than a custom one, 140 µs
	// of planning for 30 µs of work), while a VALUES list of a given length
	// keeps its generic plan. The rows past the changes (deltaRows) are of
	// no order: their lookup finds no bucket and their sum is zero.
	rows := deltaRows(len(ds))
	args := make([]any, 0, 1+3*rows)
	args = append(args, community)
	values := ""
	for i := range rows {
		d := bucketDelta{ord: -1}
		if i < len(ds) {
			d = ds[i]
		}
		if i > 0 {
			values += ", "
		}
		n := 2 + 3*i
		values += "($" + itoa(n) + "::int2, $" + itoa(n+1) + "::text, $" + itoa(n+2) + "::int8)"
		args = append(args, int16(d.ord), d.key, int64(d.delta))
	}
	b.Queue(`INSERT INTO supplier_buckets AS b (community_id, ord, lo, n)
		SELECT $1, d.ord, d.lo, sum(d.delta)::int8 FROM (
			SELECT u.ord, coalesce((SELECT max(lo) FROM supplier_buckets WHERE community_id = $1 AND ord = u.ord AND lo <= u.key), '') AS lo, u.delta
			FROM (VALUES `+values+`) AS u(ord, key, delta)) d
		GROUP BY d.ord, d.lo HAVING sum(d.delta) <> 0
		ON CONFLICT (community_id, ord, lo) DO UPDATE SET n = b.n + excluded.n
		RETURNING ord, lo, n`, args...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var ref bucketRef
			var ord int16
			if err := rows.Scan(&ord, &ref.lo, &ref.n); err != nil {
				return err
			}
			if ref.n > 2*int64(bucketSize) && split != nil {
				ref.ord = int(ord)
				*split = append(*split, ref)
			}
		}
		return rows.Err()
	})
}

// bucketRef names one bucket of the current community.
type bucketRef struct {
	ord int
	lo  string
	n   int64
}

// splitBuckets cuts each bucket in two at its middle key (when it has two
// distinct keys or more). It runs in the write's transaction, under the
// community's lock, so the counts stay exact.
func splitBuckets(ctx context.Context, tx pgx.Tx, community string, refs []bucketRef) error {
	for _, ref := range refs {
		key := bucketKeySQL(ref.ord, "t")
		col := "t." + bucketColumn(ref.ord)
		var hi *string
		if err := tx.QueryRow(ctx, `SELECT min(lo) FROM supplier_buckets WHERE community_id = $1 AND ord = $2 AND lo > $3`,
			community, int16(ref.ord), ref.lo).Scan(&hi); err != nil {
			return err
		}
		// The first bucket starts at the empty key, which is no date (nor
		// a name's key): it holds every key up to the next bucket's.
		args := []any{community}
		where := `t.community_id = $1 AND ` + col + ` IS NOT NULL`
		if ref.lo != "" {
			lo, err := bucketArg(ref.ord, ref.lo)
			if err != nil {
				return err
			}
			args = append(args, lo)
			where = `t.community_id = $1 AND ` + col + ` >= $2`
		}
		if hi != nil {
			h, err := bucketArg(ref.ord, *hi)
			if err != nil {
				return err
			}
			args = append(args, h)
			where += ` AND ` + col + ` < $` + itoa(len(args))
		}
		var mid *string
		if err := tx.QueryRow(ctx, `SELECT `+key+` FROM suppliers t WHERE `+where+` ORDER BY `+col+` OFFSET `+strconv.FormatInt(ref.n/2, 10)+` LIMIT 1`,
			args...).Scan(&mid); err != nil {
			return err
		}
		if mid == nil || *mid <= ref.lo {
			continue
		}
		m, err := bucketArg(ref.ord, *mid)
		if err != nil {
			return err
		}
		var below int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM suppliers t WHERE `+where+` AND `+col+` < $`+itoa(len(args)+1),
			append(args, m)...).Scan(&below); err != nil {
			return err
		}
		if below == 0 {
			continue
		}
		b := &pgx.Batch{}
		b.Queue(`UPDATE supplier_buckets SET n = $4 WHERE community_id = $1 AND ord = $2 AND lo = $3`, community, int16(ref.ord), ref.lo, below)
		b.Queue(`INSERT INTO supplier_buckets (community_id, ord, lo, n) VALUES ($1, $2, $3, $4)`, community, int16(ref.ord), *mid, ref.n-below)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
	}
	return nil
}

// bucketOrd is the bucketed order of a sort.
func bucketOrd(s paging.Sort) int {
	switch s.Field {
	case "createdDate":
		return ordCreated
	case "modifiedDate":
		return ordModified
	}
	return ordName
}

// bucketLookupSQL finds the bucket that holds the entry at offset $3 of
// the order ($2) in the direction given: its first key, the next bucket's
// (NULL for the last), the entries before it in that direction, and how
// many keys all buckets hold. One window order serves both directions
// (in descending order, the entries before a bucket are those of the
// buckets after it), so the buckets are read once, in index order.
func bucketLookupSQL(desc bool) string {
	before := "cum - n"
	if desc {
		before = "total - cum"
	}
	return `SELECT lo, hi, ` + before + `, total FROM (
			SELECT lo, n, lead(lo) OVER w AS hi, sum(n) OVER w AS cum, sum(n) OVER () AS total
			FROM supplier_buckets WHERE community_id = $1 AND ord = $2
			WINDOW w AS (ORDER BY lo)) x
		WHERE ` + before + ` <= $3 AND ` + before + ` + n > $3 LIMIT 1`
}

// rebuildAllBuckets computes the buckets of every community.
func rebuildAllBuckets(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT id FROM communities`)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	return rebuildBuckets(ctx, tx, ids)
}
