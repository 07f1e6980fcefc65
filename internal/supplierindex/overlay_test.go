package supplierindex

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
)

var (
	ovNames    = []string{"Kiwi Plumbing", "kiwi plumbing", "KIWI", "", "Ōtaki Foods", "otaki", "Apex", "apex", "Zeta", "Kauri", "Émile", "123", "(b)", "Harbour", "harbour freight"}
	ovKeywords = []string{"timber", "freight", "plumbing", "kiwifruit", "ōtaki", "apex-1", "zz", "k"}
)

func ovRecord(rng *rand.Rand, id uuid.UUID) supplier.Record {
	r := suppliertest.NewRecord(id, ovNames[rng.IntN(len(ovNames))])
	for range rng.IntN(3) {
		r.Keywords = append(r.Keywords, ovKeywords[rng.IntN(len(ovKeywords))])
	}
	if rng.IntN(3) == 0 {
		r.LegalBusinessName = supplier.Text{}
	}
	return r
}

// TestOverlayAgainstReference loads a community, writes to it at random
// (replacing loaded suppliers, creating, deleting, writing contacts) and
// after each batch compares every list with the reference: with the
// overlay never compacted (all the changes merged at read time), and
// with compactions running as the writes go.
//
// The plans of filtered pages are forced one way then the other: every
// page through a filter view built at the first request, or at the
// second (the default: a query's first page without, the next ones
// with), or without views: every page from the first match (frontLimit)
// or by binary search, the delta's query matches scanned or listed
// (deltaPlan).
func TestOverlayAgainstReference(t *testing.T) {
	defer func(f, d, v, vf int) { frontLimit, deltaPlan, viewAdmit, viewFrontLimit = f, d, v, vf }(frontLimit, deltaPlan, viewAdmit, viewFrontLimit)
	const never = 1 << 30
	for _, plan := range []struct{ view, front, delta int }{
		{1, 200, 0}, {2, 200, 0}, {1, never, 0}, {1, -1, 0}, {never, 200, 0}, {never, never, 1}, {never, never, 2}, {never, 0, 0},
	} {
		viewAdmit, frontLimit, deltaPlan = plan.view, plan.front, plan.delta
		viewFrontLimit = 40
		if plan.view == 1 && plan.front != 200 {
			// Every page through a view from the front, or none.
			viewFrontLimit = plan.front
		}
		limits := []int{never, 7}
		if plan.front != 200 {
			limits = limits[:1] // the plans are the same after a compaction
		}
		for _, limit := range limits {
			t.Run(fmt.Sprintf("view=%d/front=%d/delta=%d/limit=%d", plan.view, plan.front, plan.delta, limit), func(t *testing.T) { testOverlay(t, limit, 150, 40) })
		}
	}
}

// TestOverlayViewsLarge is TestOverlayAgainstReference with an overlay
// large enough that the views' lists span several blocks. Under the race
// detector (CI's go test -race, where it took five of the run's minutes)
// it checks the first front limit only, the one that splits the lists
// most; CI runs the whole sweep again without the detector.
func TestOverlayViewsLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("a larger overlay")
	}
	defer func(v, f int) { viewAdmit, viewFrontLimit = v, f }(viewAdmit, viewFrontLimit)
	viewAdmit = 1
	limits := []int{40, -1, 1 << 30}
	if raceDetector {
		limits = limits[:1]
	}
	for _, f := range limits {
		viewFrontLimit = f
		testOverlay(t, 1<<30, 1500, 500)
	}
}

// applyOne makes r the current version of its supplier in x and model.
// The index keeps the parts of what it is given and the caller must not
// change them afterwards (Apply's contract); r may share parts with an
// earlier version the index still holds, which Normalize would write into
// while a background compaction reads them, so the index gets a copy.
func applyOne(x *Index, model map[uuid.UUID]supplier.Record, r supplier.Record) {
	r = r.Clone()
	r.Normalize()
	model[r.ID] = r
	x.Apply([]supplier.Record{r}, nil)
}

func testOverlay(t *testing.T, limit, loadN, perRound int) {
	rng := rand.New(rand.NewPCG(uint64(limit), 1))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	model := map[uuid.UUID]supplier.Record{}
	var loaded []supplier.Record
	for i := range loadN {
		r := ovRecord(rng, uuid.New())
		// Shared dates, so that ties break on id.
		r.ModifiedDate = start.Add(time.Duration(rng.IntN(20)) * time.Hour)
		r.CreatedDate = start.Add(-time.Duration(rng.IntN(20)) * time.Hour)
		if i%10 == 0 {
			r.Contacts = []supplier.Contact{{ID: uuid.New(), Name: "c", ModifiedDate: r.ModifiedDate, CreatedDate: r.CreatedDate}}
		}
		r.Normalize()
		model[r.ID] = r
		loaded = append(loaded, r)
	}
	x, err := New(slices.Clone(loaded))
	if err != nil {
		t.Fatal(err)
	}
	x.mu.Lock()
	x.limit = limit
	var compactions atomic.Int32
	x.compacted = func() { compactions.Add(1) }
	x.mu.Unlock()

	var ids []uuid.UUID
	for _, r := range loaded {
		ids = append(ids, r.ID)
	}
	for i := range loadN * 2 / 5 {
		ids = append(ids, uuid.NewSHA1(uuid.Nil, []byte{byte(limit), byte(i)}))
	}
	// Writes are dated after the load, some of them alike.
	stamp := start.Add(24 * time.Hour)
	next := func() time.Time {
		stamp = stamp.Add(time.Duration(rng.IntN(2)) * time.Microsecond)
		return stamp
	}
	for round := range 4 {
		for range perRound {
			id := ids[rng.IntN(len(ids))]
			old, exists := model[id]
			switch k := rng.IntN(10); {
			case k < 6 || !exists:
				r := ovRecord(rng, id)
				r.ModifiedDate, r.CreatedDate = next(), start
				if exists {
					r.CreatedDate = old.CreatedDate
					r.Contacts = old.Contacts
				}
				applyOne(x, model, r)
			case k < 8:
				r := old
				r.ModifiedDate = next()
				r.Contacts = append(slices.Clip(old.Contacts), supplier.Contact{ID: uuid.New(), Name: "x", ModifiedDate: r.ModifiedDate, CreatedDate: r.ModifiedDate})
				applyOne(x, model, r)
			default:
				x.Apply(nil, []uuid.UUID{id})
				delete(model, id)
			}
		}
		// Let a compaction started by the last writes finish, sometimes.
		if round%2 == 1 {
			waitCompaction(t, x)
		}
		checkAgainstModel(t, x, model)
	}
	waitCompaction(t, x)
	checkAgainstModel(t, x, model)
	if limit < 100 && compactions.Load() == 0 {
		t.Errorf("no compaction ran with limit %d", limit)
	}
}

func waitCompaction(t *testing.T, x *Index) {
	t.Helper()
	for range 2000 {
		x.mu.RLock()
		busy := x.compacting
		x.mu.RUnlock()
		if !busy {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("a compaction did not finish")
}

func checkAgainstModel(t *testing.T, x *Index, model map[uuid.UUID]supplier.Record) {
	t.Helper()
	recs := make([]supplier.Record, 0, len(model))
	var mods []time.Time
	for _, r := range model {
		recs = append(recs, r)
		mods = append(mods, r.ModifiedDate)
	}
	slices.SortFunc(mods, time.Time.Compare)
	sinces := []time.Time{{}, mods[len(mods)/3], mods[len(mods)*9/10], mods[len(mods)-1].Add(time.Microsecond)}
	sorts := []paging.Sort{{Field: "name"}, {Field: "name", Desc: true}, {Field: "createdDate"}, {Field: "createdDate", Desc: true},
		{Field: "modifiedDate"}, {Field: "modifiedDate", Desc: true}}
	for _, query := range []string{"", "k", "kiwi p", "ōt", "apex-", "w-", "zz"} {
		for _, since := range sinces {
			for _, srt := range sorts {
				q := supplier.ListQuery{Query: query, ModifiedSince: since, Page: paging.Request{Sort: srt}}
				want := suppliertest.Reference(recs, q)
				for _, size := range []int{13} {
					var got []uuid.UUID
					for p := 0; p*size <= len(want); p++ {
						q.Page.Page, q.Page.Size = p, size
						page, err := x.List(q, nil)
						if err != nil {
							t.Fatal(err)
						}
						if page.Page.TotalElements != len(want) {
							t.Fatalf("query %q since %s sort %s page %d: total %d, want %d", query, since, srt, p, page.Page.TotalElements, len(want))
						}
						for _, it := range page.Content {
							if m := model[it.ID]; !cmp.Equal(it, m.Summary) {
								t.Fatalf("summary of %s differs:\n%s", it.ID, cmp.Diff(m.Summary, it))
							}
							got = append(got, it.ID)
						}
					}
					if !slices.Equal(got, want) {
						t.Fatalf("query %q since %s sort %s size %d:\n got %v\nwant %v", query, since, srt, size, got, want)
					}
				}
			}
		}
	}
	for id, r := range model {
		d, err := x.Supplier(id)
		if err != nil || !cmp.Equal(d, r.Detail) {
			t.Fatalf("Supplier(%s): %v\n%s", id, err, cmp.Diff(r.Detail, d))
		}
	}
}

// TestOverlayConcurrent reads while writers write and compactions swap
// bases (run with -race): every page read is consistent (as many items
// as the total allows, no supplier twice), and the end state equals the
// writes.
func TestOverlayConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var loaded []supplier.Record
	model := map[uuid.UUID]supplier.Record{}
	for range 200 {
		r := ovRecord(rng, uuid.New())
		r.ModifiedDate = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		r.CreatedDate = r.ModifiedDate
		r.Normalize()
		model[r.ID] = r
		loaded = append(loaded, r)
	}
	x, err := New(slices.Clone(loaded))
	if err != nil {
		t.Fatal(err)
	}
	x.mu.Lock()
	x.limit = 20
	x.mu.Unlock()
	var mu sync.Mutex // serialises a write with its model update
	stamp := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var writers, readers sync.WaitGroup
	for g := range 3 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for i := range 150 {
				id := loaded[rng.IntN(len(loaded))].ID
				if g == 0 && i%3 == 0 {
					id = uuid.NewSHA1(uuid.Nil, []byte{byte(i)})
				}
				r := ovRecord(rng, id)
				mu.Lock()
				stamp = stamp.Add(time.Microsecond)
				r.ModifiedDate, r.CreatedDate = stamp, stamp
				applyOne(x, model, r)
				mu.Unlock()
			}
		}()
	}
	stop := make(chan struct{})
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, q := range []supplier.ListQuery{{}, {Query: "k"}, {ModifiedSince: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}} {
					q.Page = paging.Request{Size: 100, Sort: paging.Sort{Field: "name"}}
					p, err := x.List(q, nil)
					if err != nil {
						t.Error(err)
						return
					}
					if len(p.Content) != min(100, p.Page.TotalElements) {
						t.Errorf("page of %d items, total %d", len(p.Content), p.Page.TotalElements)
					}
					seen := map[uuid.UUID]bool{}
					for _, it := range p.Content {
						if seen[it.ID] {
							t.Errorf("%s listed twice", it.ID)
						}
						seen[it.ID] = true
					}
				}
			}
		}()
	}
	writers.Wait()
	close(stop)
	readers.Wait()
	waitCompaction(t, x)
	checkAgainstModel(t, x, model)
}

func TestCeilMicros(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int64
	}{
		{"whole microsecond", "2026-05-01T00:00:00.000001Z", 1777593600000001},
		{"a nanosecond over rounds up", "2026-05-01T00:00:00.000001001Z", 1777593600000002},
		{"a nanosecond under rounds up to it", "2026-05-01T00:00:00.000000999Z", 1777593600000001},
		{"before 1970 rounds towards the future", "1969-12-31T23:59:59.9999995Z", 0},
		{"another zone", "2026-05-01T12:00:00+12:00", 1777593600000000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, err := time.Parse(time.RFC3339Nano, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := ceilMicros(tm); got != tt.want {
				t.Errorf("ceilMicros(%s) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}
