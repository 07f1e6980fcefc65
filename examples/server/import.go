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
	"time"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/pgstore"
)

// streamImporter is a store that upserts a data file read as a stream
// (docs: live-data.md: the import is an upsert): memstore and pgstore.
type streamImporter interface {
	ImportStream(ctx context.Context, r io.Reader) (datafile.ImportCounts, error)
}

// importFunc serves POST /admin/v1/import from the store's streaming
// upsert; nil (the route answers 501) for a store without one.
func importFunc(store backend, log *slog.Logger) httpapi.ImportFunc {
	s, ok := store.(streamImporter)
	if !ok {
		return nil
	}
	imp := func(ctx context.Context, r io.Reader) (datafile.ImportCounts, error) {
		// An import streams for as long as its body does: PostgreSQL's
		// statement timeout must not cut it.
		return s.ImportStream(pgstore.WithoutStatementTimeout(ctx), r)
	}
	return func(ctx context.Context, r io.Reader) (datafile.ImportCounts, error) {
		log.InfoContext(ctx, "admin import started")
		pr := newProgressLog(ctx, log, r, "admin import progress", 0)
		counts, err := imp(ctx, pr)
		if err != nil {
			log.InfoContext(ctx, "admin import failed", "read_mb", pr.n>>20, "duration_ms", time.Since(pr.start).Milliseconds(), "err", err)
			return nil, err
		}
		log.InfoContext(ctx, "admin import", countAttrs([]any{"duration_ms", time.Since(pr.start).Milliseconds(), "read_mb", pr.n >> 20}, counts)...)
		return counts, nil
	}
}

// progressLog logs how much of an import's input has been read, every
// importEvery, as msg with attrs first (and the percentage of size when it
// is known). The import reads it on one goroutine.
type progressLog struct {
	r     io.Reader
	ctx   context.Context
	log   *slog.Logger
	msg   string
	attrs []any
	size  int64 // 0: unknown
	n     int64
	start time.Time
	last  time.Time
}

func newProgressLog(ctx context.Context, log *slog.Logger, r io.Reader, msg string, size int64, attrs ...any) *progressLog {
	now := time.Now()
	return &progressLog{r: r, ctx: ctx, log: log, msg: msg, attrs: attrs, size: size, start: now, last: now}
}

func (p *progressLog) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if now := time.Now(); now.Sub(p.last) >= importEvery {
		p.last = now
		attrs := append(slices.Clip(p.attrs), "read_mb", p.n>>20,
			"mb_per_s", int(float64(p.n>>20)/max(now.Sub(p.start).Seconds(), 0.001)))
		if p.size > 0 {
			attrs = append(attrs, "percent", p.n*100/p.size)
		}
		p.log.InfoContext(p.ctx, p.msg, attrs...)
	}
	return n, err
}

// countAttrs are an import's counts as log attributes: the entities of
// each kind the file held, by kind in order, then how many of them all
// were created, updated and found unchanged.
func countAttrs(attrs []any, counts datafile.ImportCounts) []any {
	totals := counts.Totals()
	for _, k := range slices.Sorted(maps.Keys(totals)) {
		attrs = append(attrs, k, totals[k])
	}
	sum := counts.Sum()
	return append(attrs, "created", sum.Created, "updated", sum.Updated, "unchanged", sum.Unchanged)
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
	pg, err := pgstore.Open(ctx, cfg.postgres, pgOptions(cfg, log)...)
	if err != nil {
		return loaded{}, nil, nil, err
	}
	counts, err := importLogged(ctx, log, pg, cfg.data, bufio.NewReaderSize(f, 1<<20), size)
	if err != nil {
		pg.Close()
		return loaded{}, nil, nil, err
	}
	// The banner of a -data file tells the counts only.
	return loaded{file: &datafile.File{Communities: make([]datafile.Community, counts[datafile.KindCommunities].Total())}, suppliers: counts[datafile.KindSuppliers].Total()}, pg, pg.Close, nil
}

// importLogged upserts the data file named name, read from r (size bytes
// when known, else 0), into pg: the import of PostgreSQL's start-up, which
// logs its start, its progress every importEvery and, at the end, the
// file, the counts of each kind and the duration in milliseconds. Errors
// start with the file's name.
func importLogged(ctx context.Context, log *slog.Logger, pg *pgstore.Store, name string, r io.Reader, size int64) (datafile.ImportCounts, error) {
	log.Info("import started", "file", name, "size_mb", size>>20)
	pr := newProgressLog(ctx, log, r, "import progress", size, "file", name)
	counts, err := pg.ImportStreamWith(pgstore.WithoutStatementTimeout(ctx), pr, pgstore.ImportOptions{Size: size})
	if err != nil {
		log.Info("import failed", "file", name, "duration_ms", time.Since(pr.start).Milliseconds(), "err", err)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	log.Info("import done", countAttrs([]any{"file", name, "duration_ms", time.Since(pr.start).Milliseconds()}, counts)...)
	return counts, nil
}
