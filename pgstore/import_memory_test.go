package pgstore_test

import (
	"bufio"
	"context"
	"os"
	"testing"
	"time"

	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
)

// TestImportStreamMemory imports the data file PGSTORE_IMPORT_FILE (for
// instance one written by `go run ./examples/gendata -suppliers 100000`)
// with ImportStream and logs the time it took and the process's peak
// resident memory (VmHWM), to show that a streamed import's memory does
// not grow with the file. It is skipped without the variable.
//
//	PGSTORE_IMPORT_FILE=/tmp/data.json go test -run TestImportStreamMemory -v ./pgstore
func TestImportStreamMemory(t *testing.T) {
	path := os.Getenv("PGSTORE_IMPORT_FILE")
	if path == "" {
		t.Skip("set PGSTORE_IMPORT_FILE to a data file to measure its import")
	}
	ctx := context.Background()
	s, _ := openStore(t, nil)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("before: VmHWM %d kB", pgstore.ProcStatus(t, "VmHWM"))
	start := time.Now()
	counts, err := s.ImportStream(ctx, bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("imported %d bytes in %v: %v", st.Size(), time.Since(start).Round(time.Millisecond), counts)
	t.Logf("after: VmHWM %d kB (peak resident memory of the test process)", pgstore.ProcStatus(t, "VmHWM"))
	p, err := s.ListSuppliers(ctx, "acme", supplier.ListQuery{})
	if err == nil {
		t.Logf("first community's list total: %d", p.Page.TotalElements)
	}
}
