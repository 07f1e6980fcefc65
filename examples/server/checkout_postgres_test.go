package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/procurekit/procure/internal/pgtest"
)

// With -postgres the demo checkout keeps its holds in the database, so
// two server nodes on one database never overspend a budget together: of
// 200 concurrent checkouts of 100.00 on acme-au's 6100-300 (a budget of
// 8000), sent to both nodes in turn, exactly 80 proceed and the rest are
// over budget (soft stops, the demo's status for a sum over budget); a
// cancel through one node frees the budget for the other (docs:
// account-codes.md "Holds"). The same through PgBouncer in transaction
// mode, with the migrations sent to the database directly
// (-postgres-migrate), as the README's deployment section runs it.
func TestCheckoutHoldsSharedOnPostgres(t *testing.T) {
	t.Run("direct", func(t *testing.T) {
		dsn := pgtest.NewDatabase(t)
		testCheckoutHoldsShared(t, "-postgres", dsn)
	})
	t.Run("pgbouncer", func(t *testing.T) {
		pooled, direct := pgtest.NewPooledDatabase(t)
		testCheckoutHoldsShared(t, "-postgres", pooled, "-postgres-migrate", direct)
	})
}

func testCheckoutHoldsShared(t *testing.T, args ...string) {
	nodes := []*running{start(t, args...), start(t, args...)}
	post := func(base, path, body string) (int, map[string]any, error) {
		req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Authorization", "Bearer demo-acme-read-token")
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		if err != nil {
			return 0, nil, err
		}
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			return res.StatusCode, nil, fmt.Errorf("%w: %s", err, raw)
		}
		return res.StatusCode, out, nil
	}
	checkout := func(base, req, amount string) (string, error) {
		status, body, err := post(base, "/demo/checkout",
			`{"requisitionId": "`+req+`", "lines": [{"lineNumber": 1, "account": "6100-300", "amount": "`+amount+`"}]}`)
		if err != nil {
			return "", err
		}
		if status != http.StatusOK {
			return "", fmt.Errorf("checkout %s: status %d %v", req, status, body)
		}
		d, _ := body["decision"].(string)
		return d, nil
	}

	const n = 200
	var (
		mu        sync.Mutex
		decisions = map[string]int{}
		failures  []error
		wg        sync.WaitGroup
		slots     = make(chan struct{}, 16)
	)
	for i := range n {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			d, err := checkout(nodes[i%2].base, fmt.Sprintf("REQ-%03d", i), "100.00")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures = append(failures, err)
			}
			decisions[d]++
		})
	}
	wg.Wait()
	for _, err := range failures {
		t.Error(err)
	}
	if decisions["proceed"] != 80 || decisions["soft_stop"] != n-80 {
		t.Fatalf("decisions %v; want 80 proceed and %d soft_stop on a budget of 8000", decisions, n-80)
	}

	// Every requisition cancelled through the second node: the first node
	// sees the whole budget free again.
	for i := range n {
		status, body, err := post(nodes[1].base, "/demo/checkout/cancel", fmt.Sprintf(`{"requisitionId": "REQ-%03d"}`, i))
		if err != nil || status != http.StatusOK || body["changed"] != float64(1) {
			t.Fatalf("cancel REQ-%03d: %d %v %v", i, status, body, err)
		}
	}
	if d, err := checkout(nodes[0].base, "REQ-ALL", "8000"); err != nil || d != "proceed" {
		t.Fatalf("the whole budget after the cancels: %q %v, want proceed", d, err)
	}
	if d, err := checkout(nodes[1].base, "REQ-ONE-MORE", "0.01"); err != nil || d != "soft_stop" {
		t.Fatalf("a cent over the other node's hold: %q %v, want soft_stop", d, err)
	}
}
