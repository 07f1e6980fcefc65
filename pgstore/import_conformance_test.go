package pgstore_test

import (
	"testing"

	"github.com/procurekit/procure/datafile/importtest"
)

func TestImportConformance(t *testing.T) {
	inSetups(t, func(t *testing.T, su setup) {
		importtest.Run(t, func(tb testing.TB) importtest.Store {
			s, _ := openIn(tb, su, nil)
			return s
		})
	}, "direct", "pgbouncer") // an import reads nothing a replica could serve
}
