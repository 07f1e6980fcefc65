package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/bench/internal/fixture"
)

// fakeSuppliers serves a community's supplier list and details the way
// the supplier API does, for ids; broken, when set, spoils some answers.
func fakeSuppliers(t *testing.T, ids []string, total int, broken func(target string) (int, string, bool)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t-read" || r.Header.Get("X-Request-Id") != recordRequestID {
			http.Error(w, "headers", http.StatusUnauthorized)
			return
		}
		if broken != nil {
			if status, body, ok := broken(r.URL.RequestURI()); ok {
				w.WriteHeader(status)
				w.Write([]byte(body))
				return
			}
		}
		w.Header().Set("X-Request-Id", r.Header.Get("X-Request-Id"))
		if id, ok := strings.CutPrefix(r.URL.Path, suppliersPath+"/"); ok {
			fmt.Fprintf(w, `{"id":%q,"name":"n"}`, id)
			return
		}
		q := r.URL.Query()
		size, page := 20, 0
		if v := q.Get("size"); v != "" {
			size, _ = strconv.Atoi(v)
		}
		page, _ = strconv.Atoi(q.Get("page"))
		var items []map[string]string
		for i := page * size; i < min(len(ids), (page+1)*size); i++ {
			items = append(items, map[string]string{"id": ids[i]})
		}
		b, _ := json.Marshal(map[string]any{"content": items, "page": map[string]int{"totalElements": total}})
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func testIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	}
	return ids
}

func TestCollectIDs(t *testing.T) {
	ids := testIDs(250)
	dup := append(append([]string(nil), ids[:150]...), ids[149:249]...)
	tests := []struct {
		name    string
		listed  []string
		total   int // totalElements the server says
		want    int // suppliers the generator made
		wantErr string
	}{
		{"every supplier in name order", ids, 250, 250, ""},
		{"a multiple of the page size", ids[:200], 200, 200, ""},
		{"total differs from the generator's", ids, 250, 251, "says 250 suppliers, the generator made 251"},
		{"a supplier listed twice", dup, 250, 250, "listed twice"},
		{"fewer listed than said", ids[:240], 250, 250, "240 suppliers listed, the generator made 250"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeSuppliers(t, tt.listed, tt.total, nil)
			got, err := newRecorder(srv.URL, creds{token: "t-read"}, 2).collectIDs(context.Background(), tt.want)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("collectIDs = %v, want error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.listed, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRandomTargets(t *testing.T) {
	ids := testIDs(3)
	if got, want := randomTargets(randomSupplier, ids, 3), []string{suppliersPath + "/" + ids[0], suppliersPath + "/" + ids[1], suppliersPath + "/" + ids[2]}; !cmp.Equal(got, want) {
		t.Errorf("suppliers: %q, want %q", got, want)
	}
	for _, tt := range []struct{ total, pages int }{{1, 1}, {20, 1}, {21, 2}, {100000, 5000}} {
		got := randomTargets(randomPage, nil, tt.total)
		if len(got) != tt.pages || got[0] != suppliersPath+"?page=0" || got[len(got)-1] != suppliersPath+"?page="+strconv.Itoa(tt.pages-1) {
			t.Errorf("pages of %d: %d targets %q...%q, want %d from page=0", tt.total, len(got), got[0], got[len(got)-1], tt.pages)
		}
	}
}

// recordAll writes every answer in the order of the targets, whatever
// order they came back in, and counts the answers that fail the check.
func TestRecordAll(t *testing.T) {
	ids := testIDs(1000)
	wrong := suppliersPath + "/" + ids[700]
	srv := fakeSuppliers(t, ids, len(ids), func(target string) (int, string, bool) {
		return 404, `{"code":"NOT_FOUND"}`, target == wrong
	})
	targets := randomTargets(randomSupplier, ids, len(ids))
	path := filepath.Join(t.TempDir(), "f.jsonl")
	fw, err := fixture.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bad, first, err := newRecorder(srv.URL, creds{token: "t-read"}, 8).recordAll(context.Background(), targets, 8, fw,
		randomCheck(randomSupplier, ids, len(ids)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	if bad != 1 || first == nil || !strings.Contains(first.Error(), wrong+": status 404") {
		t.Errorf("bad %d, first %v; want the one 404 of %s", bad, first, wrong)
	}
	rs, err := fixture.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len(targets) {
		t.Fatalf("%d recorded, want %d", len(rs), len(targets))
	}
	for i, r := range rs {
		if r.Target != targets[i] || r.Method != "GET" {
			t.Fatalf("answer %d is %s %s, want GET %s", i, r.Method, r.Target, targets[i])
		}
		if i != 700 && (r.Status != 200 || string(r.Body) != fmt.Sprintf(`{"id":%q,"name":"n"}`, ids[i])) {
			t.Fatalf("answer %d: %d %s", i, r.Status, r.Body)
		}
		if r.Header.Get("X-Request-Id") != recordRequestID && i != 700 {
			t.Fatalf("answer %d lacks the fixed request id: %v", i, r.Header)
		}
	}

	// A server that stops answering ends the recording with an error.
	srv.Close()
	fw2, err := fixture.Create(filepath.Join(t.TempDir(), "g.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer fw2.Close()
	if _, _, err := newRecorder(srv.URL, creds{token: "t-read"}, 4).recordAll(context.Background(), targets, 4, fw2,
		randomCheck(randomSupplier, ids, len(ids)), nil); err == nil || !strings.Contains(err.Error(), "recording "+targets[0]) {
		t.Fatalf("recordAll on a closed server = %v, want an error naming the first target", err)
	}
}

func TestRandomCheck(t *testing.T) {
	ids := testIDs(45)
	page := func(n, total int) []byte {
		b, _ := json.Marshal(map[string]any{"content": make([]struct{}, n), "page": map[string]int{"totalElements": total}})
		return b
	}
	pc := randomCheck(randomPage, ids, 45)
	if err := pc(1, 200, page(20, 45)); err != nil {
		t.Errorf("page 1: %v", err)
	}
	if err := pc(2, 200, page(5, 45)); err != nil {
		t.Errorf("last page: %v", err)
	}
	if err := pc(2, 200, page(20, 45)); err == nil {
		t.Error("a last page of 20 of 45 passed")
	}
	sc := randomCheck(randomSupplier, ids, 45)
	if err := sc(3, 200, []byte(`{"id":"`+ids[3]+`"}`)); err != nil {
		t.Errorf("supplier 3: %v", err)
	}
	if err := sc(3, 200, []byte(`{"id":"`+ids[4]+`"}`)); err == nil {
		t.Error("supplier 4's answer passed as supplier 3's")
	}
}

// The random supplier script sends only the ids of its file, with the
// bearer token, and over a second reaches all of them; the two threads
// draw different sequences.
func TestRandomSupplierScriptUnderWrk(t *testing.T) {
	m := testManifest(t)
	cr, _ := m.creds()
	ids := testIDs(50)
	idsPath := filepath.Join(t.TempDir(), "ids.txt")
	if err := writeIDs(idsPath, ids); err != nil {
		t.Fatal(err)
	}
	sc := scenario{Method: "GET", Target: suppliersPath + "/" + ids[0], Lua: randomSupplierLua(idsPath)}
	_, reqs, _ := wrkTest(t, sc, cr)
	want := map[string]bool{}
	for _, id := range ids {
		want[suppliersPath+"/"+id] = true
	}
	hit := map[string]int{}
	for i, r := range reqs {
		if r.Method != "GET" || !want[r.URL.RequestURI()] || r.Header.Get("Authorization") != "Bearer t-read" {
			t.Fatalf("request %d: %s %s %v", i, r.Method, r.URL, r.Header)
		}
		hit[r.URL.RequestURI()]++
	}
	if len(reqs) >= 500 && len(hit) != len(ids) {
		t.Errorf("%d requests reached %d of %d suppliers", len(reqs), len(hit), len(ids))
	}
	if len(reqs) >= 20 {
		first := reqs[0].URL.RequestURI()
		same := 0
		for _, r := range reqs[:20] {
			if r.URL.RequestURI() == first {
				same++
			}
		}
		if same == 20 {
			t.Errorf("the first 20 requests all ask for %s: not random", first)
		}
	}
}

// The random page script asks for pages 0 to n-1 of the default list, all
// of them over a second, none past the end.
func TestRandomPageScriptUnderWrk(t *testing.T) {
	m := testManifest(t)
	cr, _ := m.creds()
	scs, err := scenarios(m, "n1")
	if err != nil {
		t.Fatal(err)
	}
	sc := named(t, scs, "random-page")
	if sc.Random != randomPage {
		t.Fatalf("random-page is not random: %+v", sc)
	}
	// The manifest's 50,000 suppliers make 2,500 pages; a short script
	// of 7 pages shows the bounds.
	sc.Lua = randomPageLua(7)
	_, reqs, _ := wrkTest(t, sc, cr)
	hit := map[int]int{}
	for i, r := range reqs {
		p, err := strconv.Atoi(r.URL.Query().Get("page"))
		if r.URL.Path != suppliersPath || r.URL.RawQuery != "page="+strconv.Itoa(p) || err != nil || p < 0 || p >= 7 {
			t.Fatalf("request %d: %s", i, r.URL)
		}
		hit[p]++
	}
	if len(reqs) >= 200 && len(hit) != 7 {
		t.Errorf("%d requests reached pages %v, want all of 0-6", len(reqs), hit)
	}
	if lua := named(t, scs, "random-page").Lua; !strings.Contains(lua, "math.random(2500) - 1") {
		t.Errorf("random-page of 50,000 suppliers does not draw from 2,500 pages:\n%s", lua)
	}
}
