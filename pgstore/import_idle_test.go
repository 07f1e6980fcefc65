package pgstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/supplier"
)

// An import whose body stops arriving is aborted once no byte has come
// for the idle bound (httpapi.AdminOptions.ImportIdleTimeout): the answer
// is a 408, nothing is stored, and the community whose entry the import
// had written - its row locked by the import's transaction - takes other
// writes again (issue 19 item 6). Before, the import waited for the body
// for ever, holding the lock.
func TestImportStalledBodyAborts(t *testing.T) {
	ctx := context.Background()
	s, dsn := openStore(t, fixture())
	mux := http.NewServeMux()
	const token = "admin-token-for-the-idle-test"
	httpapi.MountAdmin(mux, httpapi.AdminOptions{
		Token: token, Store: s, Import: s.ImportStream,
		ImportIdleTimeout: 200 * time.Millisecond,
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	before := snapshot(t, dsn)

	// The first community's entry is complete (the import writes it and
	// locks its row); the second's stops half-way, and so does the body.
	part := `{"communities": [{"id": "c1", "name": "Renamed by a stalled import", "region": "NZ"}, {"id": "c9", "na`
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Sent with a length larger than what follows: the server waits
	// for the rest.
	fmt.Fprintf(conn, "POST /admin/v1/import HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", token, len(part)+1000, part)

	// The answer comes once the body has been idle for the bound; a
	// minute is only how long the test waits before calling it stuck.
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to the stalled import: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	var e struct{ Code, Message string }
	_ = json.Unmarshal(body, &e)
	if resp.StatusCode != http.StatusRequestTimeout || e.Code != httpapi.CodeRequestTimeout || !strings.Contains(e.Message, "stopped arriving") {
		t.Fatalf("stalled import: %d %s; want 408 %s saying the file stopped arriving", resp.StatusCode, body, httpapi.CodeRequestTimeout)
	}
	if diff := cmp.Diff(before, snapshot(t, dsn)); diff != "" {
		t.Fatalf("the aborted import changed the database (-before +after):\n%s", diff)
	}
	// Another writer of c1 is not blocked: the lock went with the
	// transaction. (The timeout only keeps a regression from hanging.)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	rec := fixture().Communities[0].Suppliers[0]
	rec.Name = supplier.NewText("Written after the stall")
	rec.Contacts, rec.RemittanceAddresses = nil, nil
	if _, err := s.PutSupplier(wctx, "c1", rec); err != nil {
		t.Fatalf("a supplier write of c1 after the aborted import: %v", err)
	}
	if c, err := s.Community(ctx, "c1"); err != nil || c.Name != "Community One" {
		t.Errorf("c1 after the aborted import: %+v, %v; want its name kept", c, err)
	}
}
