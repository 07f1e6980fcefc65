package memstore_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure/datafile/importtest"
	"github.com/procurekit/procure/memstore"
)

// TestImportUsersMemory imports a community of MEMSTORE_IMPORT_USERS users
// (generated as it is read) and logs the time, the live heap it leaves
// and the process's peak resident memory (VmHWM). memstore holds every
// user, so the figure to compare is the peak against what stays. It is
// skipped without the variable.
//
//	MEMSTORE_IMPORT_USERS=1000000 go test -run TestImportUsersMemory -v ./memstore
func TestImportUsersMemory(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("MEMSTORE_IMPORT_USERS"))
	if n <= 0 {
		t.Skip("set MEMSTORE_IMPORT_USERS to a number of users to measure their import")
	}
	s := memstore.New()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	start := time.Now()
	counts, err := s.ImportStream(context.Background(), importtest.UserFile(n))
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	hwm := vmHWM()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	t.Logf("imported %v in %v; live heap +%d MB; peak resident %s", counts, took.Round(time.Millisecond),
		(int64(after.HeapAlloc)-int64(before.HeapAlloc))>>20, hwm)
}

func vmHWM() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
