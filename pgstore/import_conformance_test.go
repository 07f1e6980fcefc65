package pgstore_test

import (
	"testing"

	"github.com/procurekit/procure/datafile/importtest"
)

func TestImportConformance(t *testing.T) {
	importtest.Run(t, func(tb testing.TB) importtest.Store {
		s, _ := openStore(tb, nil)
		return s
	})
}
