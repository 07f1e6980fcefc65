package pgstore_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/procurekit/procure/datafile/importtest"
	"github.com/procurekit/procure/pgstore"
)

// TestImportUsersMemory imports a community of PGSTORE_IMPORT_USERS users
// (generated as it is read) and logs the time and the process's peak
// resident memory (VmHWM): a community's users are copied to the database
// in batches, so the peak does not grow with their number. It is skipped
// without the variable.
//
//	PGSTORE_IMPORT_USERS=1000000 go test -run TestImportUsersMemory -v ./pgstore
func TestImportUsersMemory(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PGSTORE_IMPORT_USERS"))
	if n <= 0 {
		t.Skip("set PGSTORE_IMPORT_USERS to a number of users to measure their import")
	}
	s, _ := openStore(t, nil)
	// Reset the peak (Linux: 5 to clear_refs), so that VmHWM is the import's.
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	t.Logf("before: VmRSS %d kB, VmHWM %d kB", pgstore.ProcStatus(t, "VmRSS"), pgstore.ProcStatus(t, "VmHWM"))
	start := time.Now()
	counts, err := s.ImportStream(context.Background(), importtest.UserFile(n))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("imported %v in %v", counts, time.Since(start).Round(time.Millisecond))
	t.Logf("after: VmHWM %d kB (peak resident memory of the test process)", pgstore.ProcStatus(t, "VmHWM"))
}
