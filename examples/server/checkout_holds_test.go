package main

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/procurekit/procure/budget"
)

// TestCheckoutDemoHolds: the demo checkout holds what a requisition's
// checkout claims in the community's own budget table, and cancel and
// confirm end or keep it (docs: account-codes.md "Holds").
func TestCheckoutDemoHolds(t *testing.T) {
	url := checkoutServer(t, checkoutConfig{OverBudget: budget.Invalid})
	checkout := func(token, req, account, amount string) string {
		t.Helper()
		a := checkoutPost(t, url, token, "application/json",
			`{"requisitionId": "`+req+`", "lines": [{"lineNumber": 1, "account": "`+account+`", "amount": "`+amount+`"}]}`)
		if a.status != http.StatusOK {
			t.Fatalf("checkout %s: status %d %v", req, a.status, a.body)
		}
		return a.resp.Decision
	}
	commit := func(token, path, body string) (int, float64) {
		t.Helper()
		a := checkoutPost(t, url+path, token, "application/json", body)
		changed, _ := a.body["changed"].(float64)
		return a.status, changed
	}
	steps := []struct{ got, want string }{
		{checkout("north-token", "REQ-A", "6100-300", "40"), "proceed"},
		{checkout("north-token", "REQ-B", "6100-300", "20"), "hard_stop"}, // 10 left
		{checkout("north-token", "REQ-A", "6100-300", "40"), "proceed"},   // a retry is not counted twice
		{checkout("south-token", "REQ-B", "6100-200", "10"), "proceed"},   // another community's holds are its own
	}
	for i, s := range steps {
		if s.got != s.want {
			t.Fatalf("step %d: %s, want %s", i, s.got, s.want)
		}
	}
	for i, c := range []struct {
		path, body string
		status     int
		changed    float64
	}{
		{"/cancel", `{"requisitionId": "REQ-A"}`, 200, 1},
		{"/cancel", `{"requisitionId": "REQ-A"}`, 200, 0},
		{"/cancel", `{"requisitionId": "unknown"}`, 200, 0},
		{"/cancel", `{}`, 400, 0},
		{"/confirm", `{"requisitionId": "` + strings.Repeat("r", 256) + `"}`, 400, 0},
	} {
		if status, changed := commit("north-token", c.path, c.body); status != c.status || changed != c.changed {
			t.Errorf("case %d: %s %s: %d changed %v, want %d changed %v", i, c.path, c.body, status, changed, c.status, c.changed)
		}
	}
	if got := checkout("north-token", "REQ-B", "6100-300", "20"); got != "proceed" {
		t.Fatalf("after the cancel: %s, want proceed", got)
	}
	if status, changed := commit("north-token", "/confirm", `{"requisitionId": "REQ-B"}`); status != 200 || changed != 1 {
		t.Fatalf("confirm: %d %v", status, changed)
	}
	if got := checkout("north-token", "REQ-C", "6100-300", "30.01"); got != "hard_stop" {
		t.Fatalf("over the commitment: %s, want hard_stop", got)
	}
	if status, _ := commit("", "/confirm", `{"requisitionId": "REQ-B"}`); status != http.StatusUnauthorized {
		t.Errorf("confirm without a token: %d, want 401", status)
	}
	req, _ := http.NewRequest(http.MethodGet, url+"/cancel", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET cancel: %d, want 405", resp.StatusCode)
	}
}

// TestCheckoutDemoMakesOneGatePerCommunity: first checkouts of a community
// arriving together make one validator and take one holds store, not one
// each (the others' expiry loops and stores would be left running).
func TestCheckoutDemoMakesOneGatePerCommunity(t *testing.T) {
	var (
		mu    sync.Mutex
		calls = map[string]int{}
	)
	url := checkoutServer(t, checkoutConfig{Holds: func(community string) (budget.HoldStore, error) {
		mu.Lock()
		calls[community]++
		mu.Unlock()
		// Long enough for the other first checkouts to arrive meanwhile.
		time.Sleep(50 * time.Millisecond)
		return budget.NewMemHolds(nil), nil
	}})
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	for i := range statuses {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(
				`{"requisitionId": "REQ-`+strconv.Itoa(i)+`", "lines": [{"lineNumber": 1, "account": "6100-300", "amount": "1"}]}`))
			if err != nil {
				return
			}
			req.Header.Set("Authorization", "Bearer north-token")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		})
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusOK {
			t.Errorf("checkout %d: status %d", i, s)
		}
	}
	if len(calls) != 1 {
		t.Fatalf("holds stores taken: %v, want one community's", calls)
	}
	for c, n := range calls {
		if n != 1 {
			t.Errorf("community %s: %d holds stores taken, want 1", c, n)
		}
	}
}
