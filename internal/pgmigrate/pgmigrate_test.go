package pgmigrate_test

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/internal/pgmigrate"
)

func TestLoad(t *testing.T) {
	sql := &fstest.MapFile{Data: []byte("SELECT 1")}
	tests := []struct {
		name    string
		fs      fstest.MapFS
		want    []int
		wantErr bool
	}{
		{"sorted by number, not by name", fstest.MapFS{"migrations/0010_b.sql": sql, "migrations/0002_a.sql": sql, "migrations/0001_init.sql": sql}, []int{1, 2, 10}, false},
		{"no version", fstest.MapFS{"migrations/init.sql": sql}, nil, true},
		{"version zero", fstest.MapFS{"migrations/0000_x.sql": sql}, nil, true},
		{"duplicate version", fstest.MapFS{"migrations/0001_a.sql": sql, "migrations/001_b.sql": sql}, nil, true},
		{"other files ignored", fstest.MapFS{"migrations/0001_a.sql": sql, "migrations/README": sql, "0002_b.sql": sql}, []int{1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := pgmigrate.Load(tt.fs)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v; want error: %v", err, tt.wantErr)
			}
			var got []int
			for _, m := range ms {
				got = append(got, m.Version)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("versions (-want +got):\n%s", diff)
			}
		})
	}
}
