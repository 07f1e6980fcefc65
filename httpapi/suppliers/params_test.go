package suppliers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// docs: values.md "Dates": modifiedSince, like every instant the service
// reads, must fall within the years 1 to 9999 in UTC. One just outside
// (by its offset, or by a fraction that rounds up) is a 400 naming the
// parameter and the rule, on both lists that take it; the instants at
// either end pass to the store.
func TestModifiedSinceYearRange(t *testing.T) {
	rec := &recordingStore{}
	ts := newServer(t, rec, nil)
	routes := []string{"/suppliers", "/suppliers/" + acmeOffice + "/remittance-addresses"}
	const rule = "modifiedSince: must be a date-time within the years 1 to 9999 in UTC"
	for _, v := range []string{
		"9999-12-31T23:30:00-01:00",          // year 10000 in UTC
		"9999-12-31T23:59:59.9999999999Z",    // rounds up into year 10000
		"0001-01-01T00:30:00%2B01:00",        // year 0 in UTC
		"0001-01-01T00:30:00+01:00",          // the same, + unencoded
		"0000-01-01", "0000-12-31T23:59:59Z", // year 0
		"0000-01-01T00:00:00-23:59", // year 0 even with the offset
		"9999-12-31T00:01:00-23:59", // 10000-01-01T00:00:00Z
	} {
		for _, route := range routes {
			res := ts.get(t, base+route+"?modifiedSince="+v, alphaToken)
			if res.status != http.StatusBadRequest {
				t.Errorf("modifiedSince=%s on %s: status %d, want 400: %s", v, route, res.status, res.body)
				continue
			}
			body := errorBody(t, res)
			if body.Code != "INVALID_PARAMETER" || !strings.HasPrefix(body.Message, rule) {
				t.Errorf("modifiedSince=%s on %s: %s %q, want INVALID_PARAMETER %q...", v, route, body.Code, body.Message, rule)
			}
		}
	}
	for _, g := range []struct {
		value string
		want  time.Time
	}{
		{"9999-12-31T23:30:00%2B01:00", time.Date(9999, 12, 31, 22, 30, 0, 0, time.UTC)},
		{"9999-12-31T23:59:59.999999999Z", time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC)},
		{"9999-12-31", time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)},
		{"0001-01-01T00:30:00-01:00", time.Date(1, 1, 1, 1, 30, 0, 0, time.UTC)},
		{"0001-01-01", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		for _, route := range routes {
			if res := ts.get(t, base+route+"?modifiedSince="+g.value, alphaToken); res.status != http.StatusOK {
				t.Errorf("modifiedSince=%s on %s: status %d, want 200: %s", g.value, route, res.status, res.body)
			}
		}
		rec.mu.Lock()
		gotList, gotAddr := rec.list[len(rec.list)-1].ModifiedSince, rec.address[len(rec.address)-1].ModifiedSince
		rec.mu.Unlock()
		if !gotList.Equal(g.want) || !gotAddr.Equal(g.want) {
			t.Errorf("modifiedSince=%s: the store got %v and %v, want %v", g.value, gotList, gotAddr, g.want)
		}
	}
}
