package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/pgstore"
)

// streamImporter is a store that upserts a data file read as a stream
// (docs: "Live data": the import is an upsert).
type streamImporter interface {
	ImportStream(ctx context.Context, r io.Reader) (map[string]int, error)
}

// importFunc serves POST /admin/v1/import from the store's streaming
// upsert; nil (the route answers 501) when the store has none.
func importFunc(store backend, log *slog.Logger) httpapi.ImportFunc {
	imp, ok := store.(streamImporter)
	if !ok {
		return nil
	}
	return func(ctx context.Context, r io.Reader) (map[string]int, error) {
		// An import streams for as long as its body does: PostgreSQL's
		// statement timeout must not cut it (no effect on memstore).
		counts, err := imp.ImportStream(pgstore.WithoutStatementTimeout(ctx), r)
		if err == nil {
			log.InfoContext(ctx, "admin import", "counts", counts)
		}
		return counts, err
	}
}
