package pgstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

func TestWriteSlotsSizes(t *testing.T) {
	for _, c := range []struct {
		conns       int32
		all, perCom int
	}{
		{1, 1, 1},
		{2, 1, 1},
		{4, 3, 2}, // pgxpool's default on up to 4 cores
		{8, 6, 5},
		{16, 12, 11}, // the example server's default on up to 4 cores
		{64, 48, 47},
	} {
		w := newWriteSlots(c.conns)
		if cap(w.all) != c.all || w.perCom != c.perCom {
			t.Errorf("newWriteSlots(%d): %d slots, %d a community; want %d, %d", c.conns, cap(w.all), w.perCom, c.all, c.perCom)
		}
	}
}

// A burst of one community's writes, parked on its lock, leaves the
// pool's other connections to everything else: a read and another
// community's write go through while the burst waits, and the burst
// holds no more connections than its slots. Before the slots, the burst
// took every connection and the read waited for one until the lock was
// released.
func TestWriteBurstLeavesConnections(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	s := openWith(t, dsn, WithMaxConns(8)) // 6 slots for writes, 5 a community's
	busy, calm := syntheticCommunity("busy", 40), syntheticCommunity("calm", 5)
	if err := s.Import(ctx, &datafile.File{Communities: []datafile.Community{busy, calm}}); err != nil {
		t.Fatal(err)
	}

	// Another session holds busy's lock, as a long write would.
	holder, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM communities WHERE id = 'busy' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}

	const burst = 20
	var wg sync.WaitGroup
	errs := make([]error, burst)
	for i := range burst {
		wg.Go(func() {
			r := busy.Suppliers[i]
			r.Contacts, r.RemittanceAddresses = nil, nil // written one by one
			r.Name = supplier.NewText(fmt.Sprint("Burst ", i))
			_, errs[i] = s.PutSupplier(ctx, "busy", r)
		})
	}
	// The burst's connections: those its slots allow, each waiting on
	// the lock.
	held := func() int32 { return s.pool.pool.Stat().AcquiredConns() }
	deadline := time.Now().Add(3 * time.Second)
	for held() < int32(s.writeSlots.perCom) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := held(); n != int32(s.writeSlots.perCom) {
		t.Errorf("the burst holds %d connections; want its %d slots' worth", n, s.writeSlots.perCom)
	}

	// While the burst waits: a read, and a write of another community.
	quick, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	page, err := s.ListSuppliers(quick, "busy", supplier.ListQuery{Page: paging.Request{Size: 5}})
	if err != nil || len(page.Content) != 5 {
		t.Errorf("a read during the burst: %d items, %v; want 5 at once", len(page.Content), err)
	}
	r := calm.Suppliers[0]
	r.Contacts, r.RemittanceAddresses = nil, nil
	r.Name = supplier.NewText("Calm while busy")
	if _, err := s.PutSupplier(quick, "calm", r); err != nil {
		t.Errorf("another community's write during the burst: %v", err)
	}
	if n := held(); n != int32(s.writeSlots.perCom) {
		t.Errorf("after them the burst holds %d connections; want %d", n, s.writeSlots.perCom)
	}

	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("burst write %d: %v", i, err)
		}
	}
	for i := range burst {
		d, err := s.Supplier(ctx, "busy", busy.Suppliers[i].ID)
		if err != nil || d.Name.String() != fmt.Sprint("Burst ", i) {
			t.Errorf("supplier %d after the burst: %q, %v", i, d.Name.String(), err)
		}
	}
}
