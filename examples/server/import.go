package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/pgstore"
)

// streamImporter is a store that upserts a data file read as a stream
// (docs: live-data.md: the import is an upsert): memstore and pgstore.
type streamImporter interface {
	ImportStream(ctx context.Context, r io.Reader) (map[string]int, error)
}

// importFunc serves POST /admin/v1/import from the store's streaming
// upsert; nil (the route answers 501) for a store without one.
func importFunc(store backend, log *slog.Logger) httpapi.ImportFunc {
	s, ok := store.(streamImporter)
	if !ok {
		return nil
	}
	imp := func(ctx context.Context, r io.Reader) (map[string]int, error) {
		// An import streams for as long as its body does: PostgreSQL's
		// statement timeout must not cut it.
		return s.ImportStream(pgstore.WithoutStatementTimeout(ctx), r)
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
	pg, err := pgstore.Open(ctx, cfg.postgres, pgstore.WithLogger(log))
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
