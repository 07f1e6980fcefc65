package memstore

import (
	"context"

	"github.com/procurekit/procure"
)

var _ procure.Readier = (*Store)(nil)

// Ready returns nil: a Store answers from memory and is ready as soon as
// it holds what it was loaded with (LoadFile and LoadReader return once
// every community is in). A host that fills a New store in the background,
// from Loader, says "not ready" itself until the loading ends, as
// examples/server does.
func (s *Store) Ready(context.Context) error { return nil }
