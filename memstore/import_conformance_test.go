package memstore_test

import (
	"testing"

	"github.com/procurekit/procure/datafile/importtest"
	"github.com/procurekit/procure/memstore"
)

func TestImportConformance(t *testing.T) {
	importtest.Run(t, func(testing.TB) importtest.Store { return memstore.New() })
}
