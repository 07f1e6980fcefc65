package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
)

// The proof of docs: live-data.md's stamping rule on a shared
// database: two nodes (two stores, two pools) run concurrent writers -
// creates, replaces, contact writes and deletes of suppliers - while a
// client polls one of them with modifiedSince = the largest modifiedDate
// it has seen (inclusive, page 0 in modifiedDate order). Transactions of
// different nodes commit in any order, yet once the writers stop and the
// client polls once more, it holds exactly the final version of every
// supplier; the suppliers it holds beyond the final data are exactly the
// deleted ones, which only a full read shows.
//
// With the per-node supplier cache on, the client polls node B only, whose
// cache follows the writes of both nodes; after the writers stop it polls
// once more when the one-second bound has passed.
func TestPollNeverMissesAChangeAcrossNodes(t *testing.T) {
	inSetups(t, func(t *testing.T, su setup) {
		t.Run("database", func(t *testing.T) { testPollAcrossNodes(t, su, false) })
		t.Run("cache", func(t *testing.T) { testPollAcrossNodes(t, su, true) })
	})
}

func testPollAcrossNodes(t *testing.T, su setup, cached bool) {
	ctx := context.Background()
	_, d := openIn(t, su, nil)
	conn := connect(t, d.direct)
	if _, err := conn.Exec(ctx, `INSERT INTO communities (id, name, region) VALUES ('live', 'Live', 'NZ')`); err != nil {
		t.Fatal(err)
	}
	opts := []pgstore.Option{pgstore.WithMaxConns(4)}
	if cached {
		opts = append(opts, pgstore.WithSupplierCache())
	}
	var nodes []*pgstore.Store
	for range 2 {
		nodes = append(nodes, d.open(t, opts...))
	}

	const (
		ids          = 24
		writersEach  = 3
		opsPerWriter = 120
	)
	supplierID := func(i int) uuid.UUID { return uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "live-%d", i)) }
	record := func(i int, rng *rand.Rand) supplier.Record {
		return supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{
			ID: supplierID(i), Name: supplier.NewText(fmt.Sprintf("Supplier %d v%d", i, rng.IntN(1000))), ProfileType: supplier.ProfileCompany,
			SupplierID: supplier.NewText(fmt.Sprintf("S-%d", i)),
		}}, Keywords: []string{fmt.Sprintf("kw%d", rng.IntN(5))}}
	}

	var writes atomic.Int64
	var wg sync.WaitGroup
	for n, node := range nodes {
		for w := range writersEach {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(n), uint64(w)))
				for range opsPerWriter {
					i := rng.IntN(ids)
					var err error
					switch op := rng.IntN(10); {
					case op < 5:
						_, err = node.PutSupplier(ctx, "live", record(i, rng))
					case op < 8:
						c := supplier.Contact{ID: uuid.NewSHA1(supplierID(i), []byte{byte(rng.IntN(3))}), Name: fmt.Sprintf("Contact %d", rng.IntN(100))}
						_, err = node.PutContact(ctx, "live", supplierID(i), c)
					case op < 9:
						err = node.DeleteContact(ctx, "live", supplierID(i), uuid.NewSHA1(supplierID(i), []byte{byte(rng.IntN(3))}))
					default:
						err = node.DeleteSupplier(ctx, "live", supplierID(i))
					}
					if err != nil && !errors.Is(err, supplier.ErrNotFound) {
						t.Errorf("node %d writer %d: %v", n, w, err)
						return
					}
					writes.Add(1)
				}
			})
		}
	}

	// The client: page 0 of modifiedDate order from its watermark on.
	// (Paging further within one poll could skip a supplier that moves to
	// the end meanwhile; the next poll starts where this one ended.)
	seen := map[uuid.UUID]supplier.Summary{}
	var watermark time.Time
	polls := 0
	poll := func() {
		t.Helper()
		for {
			polls++
			node := nodes[polls%2]
			if cached {
				node = nodes[1]
			}
			p, err := node.ListSuppliers(ctx, "live", supplier.ListQuery{ModifiedSince: watermark,
				Page: paging.Request{Size: 100, Sort: paging.Sort{Field: "modifiedDate"}}})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range p.Content {
				if s.ModifiedDate.Before(watermark) {
					t.Fatalf("poll since %v returned %s modified %v", watermark, s.ID, s.ModifiedDate)
				}
				seen[s.ID] = s
				watermark = s.ModifiedDate
			}
			if len(p.Content) < 100 {
				return
			}
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			poll()
		}
	}
	if cached || su.lag > 0 {
		time.Sleep(time.Second) // the bound within which node B follows node A
	}
	poll() // once more, after the writers stopped

	// The final data, read in full.
	final := map[uuid.UUID]supplier.Summary{}
	dates := map[time.Time]uuid.UUID{}
	for page := 0; ; page++ {
		p, err := nodes[0].ListSuppliers(ctx, "live", supplier.ListQuery{Page: paging.Request{Page: page, Size: 100}})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Content {
			final[s.ID] = s
			if other, dup := dates[s.ModifiedDate]; dup {
				t.Errorf("suppliers %s and %s have one modifiedDate %v: stamps must be unique in a community", s.ID, other, s.ModifiedDate)
			}
			dates[s.ModifiedDate] = s.ID
		}
		if len(p.Content) < 100 {
			break
		}
	}
	if len(final) == 0 || len(final) == ids {
		t.Logf("final suppliers: %d of %d ids (the mix should leave some deleted)", len(final), ids)
	}
	deleted := 0
	for id, s := range seen {
		f, ok := final[id]
		if !ok {
			// Deleted: only the full read shows it, and every read of it
			// is not found.
			deleted++
			if _, err := nodes[1].Supplier(ctx, "live", id); !errors.Is(err, supplier.ErrNotFound) {
				t.Errorf("supplier %s: in no list, but Supplier = %v; want ErrNotFound", id, err)
			}
			continue
		}
		if diff := cmp.Diff(f, s); diff != "" {
			t.Errorf("supplier %s: the client holds a stale version (-final +client):\n%s", id, diff)
		}
	}
	for id := range final {
		if _, ok := seen[id]; !ok {
			t.Errorf("supplier %s: never seen by the polling client", id)
		}
	}
	t.Logf("%d writes on 2 nodes, %d polls; %d suppliers at the end, %d deleted ones still held by the client", writes.Load(), polls, len(final), deleted)
	if cached {
		if pgstore.CacheServed(nodes[1]) == 0 {
			t.Errorf("node B's cache served none of the %d polls", polls)
		}
		t.Logf("node B's cache served %d reads", pgstore.CacheServed(nodes[1]))
	}
	if writes.Load() != 2*writersEach*opsPerWriter {
		t.Fatalf("%d writes done; want %d", writes.Load(), 2*writersEach*opsPerWriter)
	}
}
