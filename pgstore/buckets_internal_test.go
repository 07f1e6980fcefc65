package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// Deep pages read through the buckets equal the plain OFFSET pages, in
// every order and direction, while creates, renames (to duplicate and
// empty names), contact writes (which restamp) and deletes change the
// data; and every bucket's count stays exact. Buckets are cut to 3 keys
// here, so that splits happen and most pages are deep.
func TestDeepPagesThroughBuckets(t *testing.T) {
	withBucketSize(t, 3)
	ctx := context.Background()
	c := syntheticCommunity("bk", 40)
	c.Suppliers[3].Name, c.Suppliers[5].Name = supplier.Text{}, supplier.Text{}
	c.Suppliers[7].Name, c.Suppliers[8].Name = supplier.NewText("Same"), supplier.NewText("same")
	s := importedStore(t, c)
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]uuid.UUID, 0, 60)
	for _, r := range c.Suppliers {
		ids = append(ids, r.ID)
	}
	names := []string{"", "Same", "alpha", "Zed", "mid", "ærø"}
	for round := range 12 {
		for range 12 {
			i := rng.IntN(len(ids) + 5)
			switch op := rng.IntN(10); {
			case i >= len(ids) || op < 4:
				id := uuid.New()
				if i < len(ids) {
					id = ids[i]
				} else {
					ids = append(ids, id)
				}
				r := supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: id, ProfileType: supplier.ProfileCompany,
					Name: supplier.NewText(names[rng.IntN(len(names))] + fmt.Sprint(rng.IntN(3)))}}}
				if rng.IntN(3) == 0 {
					r.Name = supplier.Text{}
				}
				if _, err := s.PutSupplier(ctx, "bk", r); err != nil {
					t.Fatal(err)
				}
			case op < 8:
				_, err := s.PutContact(ctx, "bk", ids[i], supplier.Contact{ID: uuid.New(), Name: "c"})
				if err != nil && !isNotFound(err) {
					t.Fatal(err)
				}
			default:
				if err := s.DeleteSupplier(ctx, "bk", ids[i]); err != nil && !isNotFound(err) {
					t.Fatal(err)
				}
			}
		}
		checkBuckets(t, s, "bk")
		for _, sort := range []paging.Sort{{Field: "name"}, {Field: "name", Desc: true}, {Field: "createdDate"},
			{Field: "createdDate", Desc: true}, {Field: "modifiedDate"}, {Field: "modifiedDate", Desc: true}} {
			for _, size := range []int{2, 5} {
				for page := 0; page*size < 70; page++ {
					q := supplier.ListQuery{Page: paging.Request{Page: page, Size: size, Sort: sort}}
					got, err := s.ListSuppliers(ctx, "bk", q)
					if err != nil {
						t.Fatal(err)
					}
					want := plainPage(t, s, q)
					if diff := cmp.Diff(want, got.Content); diff != "" {
						t.Fatalf("round %d %s size %d page %d: deep page differs from OFFSET (-want +got):\n%s", round, sort, size, page, diff)
					}
				}
			}
		}
	}
}

// withBucketSize cuts buckets to n keys until the test ends.
func withBucketSize(t *testing.T, n int) {
	old := bucketSize
	bucketSize = n
	t.Cleanup(func() { bucketSize = old })
}

// importedStore opens a store on a fresh database and imports c.
func importedStore(t *testing.T, c datafile.Community) *Store {
	t.Helper()
	s := openWith(t, pgtest.NewDatabase(t))
	if err := s.Import(context.Background(), &datafile.File{Communities: []datafile.Community{c}}); err != nil {
		t.Fatal(err)
	}
	return s
}

// bucketStats returns how many buckets an order of the community has, and
// the fewest and most keys one holds.
func bucketStats(t *testing.T, s *Store, community string, ord int) (buckets, smallest, largest int64) {
	t.Helper()
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*), min(n), max(n) FROM supplier_buckets WHERE community_id = $1 AND ord = $2`,
		community, int16(ord)).Scan(&buckets, &smallest, &largest); err != nil {
		t.Fatal(err)
	}
	return buckets, smallest, largest
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, supplier.ErrNotFound) }

// plainPage reads a page with the plain OFFSET query.
func plainPage(t *testing.T, s *Store, q supplier.ListQuery) []supplier.Summary {
	t.Helper()
	q.Page, _ = q.Page.Check(supplier.ListPaging)
	_, page, err := listQueries("bk", q)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.pool.Query(context.Background(), page.sql, page.args...)
	if err != nil {
		t.Fatal(err)
	}
	items, err := pgx.CollectRows(rows, collectSummary)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// checkBuckets checks that every bucket counts exactly the keys from its
// lo up to the next bucket's, and that the buckets hold every key.
func checkBuckets(t *testing.T, s *Store, community string) {
	t.Helper()
	ctx := context.Background()
	for ord := range 3 {
		key := bucketKeySQL(ord, "t")
		rows, err := s.pool.Query(ctx, `SELECT b.lo, b.n, (SELECT count(*) FROM suppliers t WHERE t.community_id = $1
				AND `+key+` COLLATE "C" >= b.lo AND (b.hi IS NULL OR `+key+` COLLATE "C" < b.hi))
			FROM (SELECT lo, n, lead(lo) OVER (ORDER BY lo) AS hi FROM supplier_buckets WHERE community_id = $1 AND ord = $2) b`,
			community, int16(ord))
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for rows.Next() {
			var lo string
			var n, real int64
			if err := rows.Scan(&lo, &n, &real); err != nil {
				t.Fatal(err)
			}
			if n != real {
				t.Errorf("ord %d bucket %q counts %d; it holds %d", ord, lo, n, real)
			}
			sum += n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		var all int64
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM suppliers t WHERE t.community_id = $1 AND `+key+` IS NOT NULL`, community).Scan(&all); err != nil {
			t.Fatal(err)
		}
		if sum != all {
			t.Errorf("ord %d: buckets count %d keys; the community has %d", ord, sum, all)
		}
	}
}

// An import cuts each order's keys into buckets of about bucketSize keys
// (not one bucket per key).
func TestImportBucketSizes(t *testing.T) {
	withBucketSize(t, 10)
	s := importedStore(t, syntheticCommunity("bs", 200))
	for ord := range 3 {
		buckets, smallest, largest := bucketStats(t, s, "bs", ord)
		// 200 keys (fewer names: some are empty) in runs of 10 or a little
		// more where keys repeat.
		if buckets < 15 || buckets > 20 || largest > 2*int64(bucketSize) {
			t.Errorf("ord %d: %d buckets of %d to %d keys; want about 20 of about 10", ord, buckets, smallest, largest)
		}
	}
	checkBuckets(t, s, "bs")
}

// A community that grows by puts alone (no import cut its buckets) has
// its orders' first buckets, which start at the empty key, split as they
// grow: the date orders' too (until session 25 their split failed on
// the empty key, which is no date, and left the one bucket to grow).
func TestFirstBucketsSplit(t *testing.T) {
	withBucketSize(t, 3)
	ctx := context.Background()
	s := importedStore(t, syntheticCommunity("fb", 0))
	for i := range 20 {
		r := supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: uuid.New(), ProfileType: supplier.ProfileCompany,
			Name: supplier.NewText(fmt.Sprint(string(rune('A'+i*7%26)), " grown"))}}}
		if _, err := s.PutSupplier(ctx, "fb", r); err != nil {
			t.Fatal(err)
		}
	}
	for ord := range 3 {
		buckets, _, largest := bucketStats(t, s, "fb", ord)
		if buckets < 3 || largest > 2*int64(bucketSize) {
			t.Errorf("ord %d: %d buckets, the largest of %d keys; want 20 keys cut into buckets of at most %d", ord, buckets, largest, 2*bucketSize)
		}
	}
	checkBuckets(t, s, "fb")
}

// The bucket changes of a write or a group: a key's changes summed, those
// that come to nothing dropped, in key order; the stamp's keys of the
// date orders lastKey, a name's never; and the VALUES list's length.
func TestBucketDeltaHelpers(t *testing.T) {
	stamp := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	k := dateKey(stamp)
	older := dateKey(stamp.Add(-time.Hour))
	for _, tc := range []struct {
		name string
		in   []bucketDelta
		want []bucketDelta
	}{
		{"none", nil, nil},
		{"a rename", []bucketDelta{{ordName, "6a", 1}, {ordName, "41", -1}, {ordModified, k, 1}, {ordModified, older, -1}},
			[]bucketDelta{{ordName, "41", -1}, {ordName, "6a", 1}, {ordModified, older, -1}, {ordModified, lastKey, 1}}},
		{"a new supplier", []bucketDelta{{ordName, "41", 1}, {ordCreated, k, 1}, {ordModified, k, 1}},
			[]bucketDelta{{ordName, "41", 1}, {ordCreated, lastKey, 1}, {ordModified, lastKey, 1}}},
		{"a name key that reads like the stamp's", []bucketDelta{{ordName, k, 1}}, []bucketDelta{{ordName, k, 1}}},
		{"a key in and out", []bucketDelta{{ordName, "41", 1}, {ordModified, older, -1}, {ordName, "41", -1}},
			[]bucketDelta{{ordModified, older, -1}}},
		{"a group's", []bucketDelta{{ordModified, k, 1}, {ordModified, older, -1}, {ordModified, k, 1}, {ordCreated, older, 0}},
			[]bucketDelta{{ordModified, older, -1}, {ordModified, lastKey, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeDeltas(stampKeys(slices.Clone(tc.in), stamp))
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(bucketDelta{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if lastKey <= "f" || lastKey <= k {
		t.Errorf("lastKey %q sorts before a hex digit or a date's key", lastKey)
	}
	for _, tc := range []struct{ n, want int }{{0, 0}, {1, 1}, {6, 6}, {8, 8}, {9, 16}, {16, 16}, {17, 24}, {192, 192}} {
		if got := deltaRows(tc.n); got != tc.want {
			t.Errorf("deltaRows(%d) = %d; want %d", tc.n, got, tc.want)
		}
	}
}

// A count change with nowhere to note a bucket grown past its size (a
// group whose puts name none, queueGroup) is applied all the same,
// and the bucket is split by the next write that grows it.
func TestBucketDeltasWithoutSplitList(t *testing.T) {
	withBucketSize(t, 2)
	ctx := context.Background()
	s := importedStore(t, syntheticCommunity("ns", 4))
	count := func() (n int64) {
		t.Helper()
		if err := s.pool.QueryRow(ctx, `SELECT n FROM supplier_buckets WHERE community_id = 'ns' AND ord = $1 ORDER BY lo DESC LIMIT 1`,
			int16(ordModified)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	b := &pgx.Batch{}
	queueBucketDeltas(b, "ns", []bucketDelta{{ordModified, lastKey, 5}}, nil)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != before+5 {
		t.Errorf("the last bucket counts %d; want %d", n, before+5)
	}
	// Undo, so that the counts are exact again for checkBuckets.
	b = &pgx.Batch{}
	var split []bucketRef
	queueBucketDeltas(b, "ns", []bucketDelta{{ordModified, lastKey, -5}}, &split)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	checkBuckets(t, s, "ns")
}
