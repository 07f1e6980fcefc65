package suppliers_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/memstore"
)

// emptyTextFile is a data file whose supplier gives optional text fields
// as "" in every scope (the summary, bank account and its address, emails,
// payment term, default contact and address, a contact and an address),
// beside fields that are absent.
const emptyTextFile = `{"communities": [{
  "id": "rt", "name": "Round trip", "region": "DEMO",
  "tokens": [{"token": "rt-read", "scopes": ["suppliers:read"]}],
  "suppliers": [{
    "id": "b1000000-0000-4000-8000-000000000001",
    "name": "", "supplierId": "", "profileType": "COMPANY", "legalBusinessName": "Empty Names Ltd",
    "modifiedDate": "2026-01-02T03:04:05Z", "createdDate": "2026-01-01T00:00:00Z",
    "defaultContact": {"id": "b1000000-0000-4000-8000-000000000002", "name": "Jo", "email": "", "phone": {"number": ""},
      "modifiedDate": "2026-01-02T03:04:05Z", "createdDate": "2026-01-01T00:00:00Z"},
    "defaultRemittanceAddress": {"id": "b1000000-0000-4000-8000-000000000003", "code": "",
      "address": {"line1": "1 Main St", "line2": "", "city": "Sydney", "country": "AU", "region": {"code": ""}},
      "modifiedDate": "2026-01-02T03:04:05Z", "createdDate": "2026-01-01T00:00:00Z"},
    "bankAccount": {"id": "b1000000-0000-4000-8000-000000000004", "country": "AU", "bankName": "",
      "address": {"line1": "2 Bank St", "city": "Sydney", "country": "AU", "postcode": ""}},
    "emails": {"ordersEmailAddress": ""},
    "settings": {"paymentTerm": {"id": "b1000000-0000-4000-8000-000000000005", "code": "N30", "active": true, "termType": "IMMEDIATELY", "description": ""}},
    "contacts": [{"id": "b1000000-0000-4000-8000-000000000006", "name": "Al", "email": "", "phone": {"extension": ""},
      "modifiedDate": "2026-01-02T03:04:05Z", "createdDate": "2026-01-01T00:00:00Z"}],
    "remittanceAddresses": [{"id": "b1000000-0000-4000-8000-000000000007", "companyName": "",
      "address": {"line1": "3 Pay St", "line3": "", "city": "Perth", "country": "AU"},
      "modifiedDate": "2026-01-02T03:04:05Z", "createdDate": "2026-01-01T00:00:00Z"}]
  }]
}]}`

// TestEmptyTextRoundTrips: a "" in the data file is a "" in every answer
// of the supplier API, and an absent field stays absent (docs: "Values
// round-trip exactly").
func TestEmptyTextRoundTrips(t *testing.T) {
	streamed := func(t *testing.T) *memstore.Store {
		s, err := memstore.LoadReader(strings.NewReader(emptyTextFile))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	const sid = "b1000000-0000-4000-8000-000000000001"
	for name, load := range map[string]func(*testing.T) *memstore.Store{"Stream": streamed} {
		t.Run(name, func(t *testing.T) {
			s := load(t)
			ts := newServer(t, s, s)
			for _, c := range []struct {
				target string
				path   []string // to the object checked
				want   map[string]any
			}{
				{base + "/suppliers", []string{"content", "0"},
					map[string]any{"name": "", "supplierId": "", "legalBusinessName": "Empty Names Ltd"}},
				{base + "/suppliers/" + sid, nil,
					map[string]any{"name": "", "supplierId": "", "legalBusinessName": "Empty Names Ltd"}},
				{base + "/suppliers/" + sid, []string{"defaultContact"},
					map[string]any{"name": "Jo", "email": "", "phone": map[string]any{"number": ""}}},
				{base + "/suppliers/" + sid, []string{"defaultRemittanceAddress"},
					map[string]any{"code": "", "address": map[string]any{"line1": "1 Main St", "line2": "", "city": "Sydney", "country": "AU", "region": map[string]any{"code": ""}}}},
				{base + "/suppliers/" + sid, []string{"bankAccount"},
					map[string]any{"country": "AU", "bankName": "", "address": map[string]any{"line1": "2 Bank St", "city": "Sydney", "country": "AU", "postcode": ""}}},
				{base + "/suppliers/" + sid, []string{"emails"},
					map[string]any{"ordersEmailAddress": ""}},
				{base + "/suppliers/" + sid, []string{"settings", "paymentTerm"},
					map[string]any{"code": "N30", "active": true, "termType": "IMMEDIATELY", "description": ""}},
				{base + "/suppliers/" + sid + "/contacts", []string{"content", "0"},
					map[string]any{"name": "Al", "email": "", "phone": map[string]any{"extension": ""}}},
				{base + "/suppliers/" + sid + "/remittance-addresses", []string{"content", "0"},
					map[string]any{"companyName": "", "address": map[string]any{"line1": "3 Pay St", "line3": "", "city": "Perth", "country": "AU"}}},
			} {
				res := ts.get(t, c.target, "rt-read")
				if res.status != 200 {
					t.Fatalf("GET %s: %d %s", c.target, res.status, res.body)
				}
				var v any
				if err := json.Unmarshal(res.body, &v); err != nil {
					t.Fatal(err)
				}
				for _, k := range c.path {
					switch x := v.(type) {
					case map[string]any:
						v = x[k]
					case []any:
						v = x[0]
					}
				}
				got, _ := v.(map[string]any)
				// Only the members the case names (ids and dates aside).
				for k := range got {
					if _, ok := c.want[k]; !ok && k != "id" && k != "modifiedDate" && k != "createdDate" && k != "profileType" {
						delete(got, k)
					}
				}
				for _, k := range []string{"id", "modifiedDate", "createdDate", "profileType"} {
					delete(got, k)
				}
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("GET %s at %v (-want +got):\n%s", c.target, c.path, diff)
				}
			}
			// Absent fields stay absent.
			res := ts.get(t, base+"/suppliers/"+sid, "rt-read")
			for _, absent := range []string{`"firstName"`, `"communitySupplierId"`, `"defaultEmailAddress":`, `"accountName"`, `"line3"`, `"prefix"`} {
				if strings.Contains(string(res.body), absent) {
					t.Errorf("GET supplier has %s, which the file does not give:\n%s", absent, res.body)
				}
			}
		})
	}
}
