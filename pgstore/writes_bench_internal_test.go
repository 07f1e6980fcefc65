package pgstore

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/cputime"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// BenchmarkPutSupplierWhileReading measures supplier puts on a node with
// the supplier cache while eight readers list the first page without
// pause: sixteen writers share the community's lock and the node's cores
// with the readers, as a node taking 1,000 writes a second under read
// load does (issue 22). ns/op is the time per put across the writers;
// syncs/op the read syncs per put (reads that found the node's own
// writes not applied yet and went to the database, cache.go: reader),
// reads/op the reads served per put; db-cpu-ns/op the database's CPU a
// put, when it runs on this machine. PGSTORE_BENCH_READERS sets the
// readers (0: the writers alone, the community lock's own bound).
// pipe= is the path of the grouped puts: through the community's pipe
// (write_pipe.go, a direct connection's) or on connections of their own
// (write_group.go, a pooler's).
//
//	go test -run '^$' -bench BenchmarkPutSupplierWhileReading -benchtime 4000x -count 4 ./pgstore
func BenchmarkPutSupplierWhileReading(b *testing.B) {
	for _, pipe := range []bool{true, false} {
		b.Run(fmt.Sprintf("pipe=%v", pipe), func(b *testing.B) { benchPutWhileReading(b, pipe) })
	}
}

func benchPutWhileReading(b *testing.B, pipe bool) {
	ctx := context.Background()
	readerCount := 8
	if v := os.Getenv("PGSTORE_BENCH_READERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			b.Fatalf("PGSTORE_BENCH_READERS=%q: want a count of readers", v)
		}
		readerCount = n
	}
	s, err := Open(ctx, pgtest.NewDatabase(b)+"&pool_max_conns=16", WithSupplierCache())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	s.groups.pipe = pipe
	c := syntheticCommunity("rw", 5000)
	if err := s.Import(ctx, &datafile.File{Communities: []datafile.Community{c}}); err != nil {
		b.Fatal(err)
	}
	q := supplier.ListQuery{Page: paging.Request{Size: 20}}
	if _, err := s.ListSuppliers(ctx, "rw", q); err != nil { // loads rw
		b.Fatal(err)
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	var reads atomic.Int64
	for range readerCount {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.ListSuppliers(ctx, "rw", q); err != nil {
					b.Error(err)
					return
				}
				reads.Add(1)
			}
		})
	}
	syncs := s.cache.readSyncs.Load()
	cached, raced := s.writesFromCache.Load(), s.writesRaced.Load()
	dbCPU := databaseCPU(ctx, s)
	db0, dbErr := dbCPU()
	var seq atomic.Int64
	b.SetParallelism(16 / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(seq.Add(1))
			r := supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: c.Suppliers[(i*7)%len(c.Suppliers)].ID,
				Name: supplier.NewText(fmt.Sprint("Writer ", i)), ProfileType: supplier.ProfileCompany}}}
			if _, err := s.PutSupplier(ctx, "rw", r); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	close(stop)
	readers.Wait()
	b.ReportMetric(float64(s.cache.readSyncs.Load()-syncs)/float64(b.N), "syncs/op")
	b.ReportMetric(float64(reads.Load())/float64(b.N), "reads/op")
	b.ReportMetric(float64(s.writesFromCache.Load()-cached)/float64(b.N), "cached/op")
	b.ReportMetric(float64(s.writesRaced.Load()-raced)/float64(b.N), "redone/op")
	if db1, err := dbCPU(); err == nil && dbErr == nil {
		b.ReportMetric(float64(db1-db0)/float64(b.N), "db-cpu-ns/op")
	}
}

// databaseCPU returns the function that reads the CPU time the database
// server's processes have used (cputime.FamilyUsed), when the server runs
// on this machine: a postgres process, the parent of the backend that
// serves s, under Linux's /proc. Elsewhere the function returns an error,
// and a benchmark reports no db-cpu-ns/op. The database's CPU a put,
// whatever else the machine runs meanwhile, is what decides whether a
// database that shares its cores keeps up with a node's writes
// (bench/README.md, session 25).
func databaseCPU(ctx context.Context, s *Store) func() (time.Duration, error) {
	var backend int
	err := s.pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend)
	root := 0
	if err == nil {
		root, err = cputime.Parent("/proc", backend)
	}
	for _, pid := range []int{backend, root} {
		if err != nil {
			break
		}
		var comm []byte
		if comm, err = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil && strings.TrimSpace(string(comm)) != "postgres" {
			err = fmt.Errorf("process %d is %q, not the database's", pid, comm)
		}
	}
	return func() (time.Duration, error) {
		if err != nil {
			return 0, err
		}
		return cputime.FamilyUsed("/proc", root)
	}
}
