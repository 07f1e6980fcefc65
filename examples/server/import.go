package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
)

// streamImporter is a store that upserts a data file read as a stream
// (docs: live-data.md: the import is an upsert): pgstore.
type streamImporter interface {
	ImportStream(ctx context.Context, r io.Reader) (map[string]int, error)
}

// streamLoader is a store that adds whole new communities from a stream
// (memstore's Loader).
type streamLoader interface {
	Loader() datafile.Handler
	Community(ctx context.Context, id string) (procure.Community, error)
}

// importFunc serves POST /admin/v1/import from the store's streaming
// upsert; for a store that can only add communities (memstore), from its
// loader, refusing a community it holds already with 409; nil (the route
// answers 501) when the store has neither.
func importFunc(store backend, log *slog.Logger) httpapi.ImportFunc {
	var imp func(ctx context.Context, r io.Reader) (map[string]int, error)
	switch s := store.(type) {
	case streamImporter:
		imp = func(ctx context.Context, r io.Reader) (map[string]int, error) {
			// An import streams for as long as its body does:
			// PostgreSQL's statement timeout must not cut it.
			return s.ImportStream(pgstore.WithoutStatementTimeout(ctx), r)
		}
	case streamLoader:
		imp = func(ctx context.Context, r io.Reader) (map[string]int, error) { return loadNew(ctx, s, r) }
	default:
		return nil
	}
	return func(ctx context.Context, r io.Reader) (map[string]int, error) {
		start := time.Now()
		log.InfoContext(ctx, "admin import started")
		pr := &progressLog{r: r, ctx: ctx, log: log, start: start, last: start}
		counts, err := imp(ctx, pr)
		if err != nil {
			log.InfoContext(ctx, "admin import failed", "read_mb", pr.n>>20, "err", err)
			return nil, err
		}
		attrs := []any{"duration", time.Since(start).Round(time.Millisecond), "read_mb", pr.n >> 20}
		for _, k := range slices.Sorted(maps.Keys(counts)) {
			attrs = append(attrs, k, counts[k])
		}
		log.InfoContext(ctx, "admin import", attrs...)
		return counts, nil
	}
}

// progressLog logs how much of an admin import's body has been read,
// every importEvery. The import reads it on one goroutine.
type progressLog struct {
	r     io.Reader
	ctx   context.Context
	log   *slog.Logger
	n     int64
	start time.Time
	last  time.Time
}

func (p *progressLog) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if now := time.Now(); now.Sub(p.last) >= importEvery {
		p.last = now
		p.log.InfoContext(p.ctx, "admin import progress", "read_mb", p.n>>20,
			"mb_per_s", int(float64(p.n>>20)/max(now.Sub(p.start).Seconds(), 0.001)))
	}
	return n, err
}

// importEvery is how often an import (at start, or over the admin API)
// logs its progress.
var importEvery = 2 * time.Second

// importData opens the PostgreSQL store and upserts the -data file into it
// as a stream (bounded memory whatever the file's size), logging progress
// on standard error every importEvery and the totals at the end.
func importData(ctx context.Context, cfg config, log *slog.Logger) (loaded, backend, func(), error) {
	f, err := os.Open(cfg.data)
	if err != nil {
		return loaded{}, nil, nil, err
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	pg, err := pgstore.Open(ctx, cfg.postgres)
	if err != nil {
		return loaded{}, nil, nil, err
	}
	start := time.Now()
	var mu sync.Mutex
	last := start
	progress := func(n int64) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if now.Sub(last) < importEvery {
			return
		}
		last = now
		attrs := []any{"file", cfg.data, "read_mb", n >> 20, "mb_per_s", int(float64(n>>20) / now.Sub(start).Seconds())}
		if size > 0 {
			attrs = append(attrs, "percent", n*100/size)
		}
		log.Info("import progress", attrs...)
	}
	log.Info("import started", "file", cfg.data, "size_mb", size>>20)
	counts, err := pg.ImportStreamWith(pgstore.WithoutStatementTimeout(ctx), bufio.NewReaderSize(f, 1<<20), pgstore.ImportOptions{Progress: progress})
	if err != nil {
		pg.Close()
		return loaded{}, nil, nil, fmt.Errorf("%s: %w", cfg.data, err)
	}
	attrs := []any{"file", cfg.data, "duration", time.Since(start).Round(time.Millisecond)}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		attrs = append(attrs, k, counts[k])
	}
	log.Info("import done", attrs...)
	// The banner of a -data file tells the counts only.
	return loaded{file: &datafile.File{Communities: make([]datafile.Community, counts["communities"])}, suppliers: counts["suppliers"]}, pg, pg.Close, nil
}

// loadNew streams a data file into s, community by community, as
// memstore loads a -data file at start. memstore has no upsert of a whole
// data file, so a community it holds already is refused (409 CONFLICT,
// naming it) instead of being half merged: run the server on -postgres
// for the upsert, or change such a community through the admin API's
// writes. Communities before the refused one stay added. Memory holds one
// community's suppliers while they are read, which the store keeps anyway.
func loadNew(ctx context.Context, s streamLoader, r io.Reader) (map[string]int, error) {
	h := &newOnly{ctx: ctx, store: s, next: s.Loader(), counts: map[string]int{
		"communities": 0, "suppliers": 0, "contacts": 0, "remittanceAddresses": 0,
		"tokens": 0, "serviceAccounts": 0, "users": 0, "budgets": 0,
	}}
	if err := datafile.Stream(r, h); err != nil {
		return nil, err
	}
	return h.counts, nil
}

// newOnly passes a stream to memstore's loader, counting what it adds and
// refusing communities the store holds.
type newOnly struct {
	ctx    context.Context
	store  streamLoader
	next   datafile.Handler
	counts map[string]int
	// Counts of the community being read, added once it is.
	contacts, addresses int
}

func (h *newOnly) Supplier(ci, si int, rec *supplier.Record) error {
	if err := h.ctx.Err(); err != nil {
		return err
	}
	h.contacts += len(rec.Contacts)
	h.addresses += len(rec.RemittanceAddresses)
	return h.next.Supplier(ci, si, rec)
}

func (h *newOnly) Community(ci int, c *datafile.Community, n int) error {
	contacts, addresses := h.contacts, h.addresses
	h.contacts, h.addresses = 0, 0
	_, err := h.store.Community(h.ctx, c.ID)
	switch {
	case err == nil:
		return conflictError(fmt.Sprintf("communities[%d].id: community %q exists, and this server (in memory) imports only new communities; change it with the admin API's writes, or run on -postgres for an upsert", ci, c.ID))
	case !errors.Is(err, procure.ErrUnknownCommunity):
		return err
	}
	if err := h.next.Community(ci, c, n); err != nil {
		// The file's credentials or suppliers collide with what the
		// store holds (a token, a key or an account id of another
		// community).
		return conflictError(err.Error())
	}
	h.counts["communities"]++
	h.counts["suppliers"] += n
	h.counts["contacts"] += contacts
	h.counts["remittanceAddresses"] += addresses
	h.counts["tokens"] += len(c.Tokens)
	h.counts["serviceAccounts"] += len(c.ServiceAccounts)
	h.counts["users"] += len(c.Users)
	h.counts["budgets"] += len(c.Budgets)
	return nil
}

// conflictError is a refusal that matches procure.ErrConflict (409) with
// its own words only.
type conflictError string

func (e conflictError) Error() string        { return string(e) }
func (e conflictError) Is(target error) bool { return target == procure.ErrConflict }
