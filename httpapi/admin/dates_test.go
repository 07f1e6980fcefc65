package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/procurekit/procure/datafile"
)

// The two inputs of issue 19 item 4 (docs: values.md "Dates"). Before,
// the first was stored and the second stamped year 10000; every supplier
// read of the community was then a 500, for good.
const (
	pastUTC9999 = "9999-12-31T23:30:00-01:00" // year 10000 in UTC
	lastStamp   = "9999-12-31T23:59:59.999999Z"
	instantRule = `must be a date-time within the years 1 to 9999 in UTC`
)

// Over HTTP on both stores: an instant in a write whose UTC form is
// outside the years 1 to 9999 is a 400 naming the field, and nothing is
// written.
func TestAdminDatePast9999(t *testing.T) {
	forAdminStores(t, func(t *testing.T, e *adminEnv) {
		e.community(t, "acme-au")
		sup := adminSupplier(t)
		path := "/communities/acme-au/suppliers/" + adminSupplierID
		for _, tc := range []struct{ name, body, field string }{
			{"tinLastVerifiedDate", strings.Replace(sup, `"modifiedDate": "2022-06-01T15:09:45Z"`,
				`"modifiedDate": "2022-06-01T15:09:45Z", "tinLastVerifiedDate": "`+pastUTC9999+`"`, 1), "tinLastVerifiedDate"},
			{"an ignored modifiedDate", strings.Replace(sup, `"2022-06-01T15:09:45Z"`, `"`+pastUTC9999+`"`, 1), "modifiedDate"},
			{"the default contact's createdDate", strings.Replace(sup, `"2021-09-20T23:38:58Z"`, `"0001-01-01T00:30:00+01:00"`, 1), "defaultContact.createdDate"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e.call(t, "PUT", path, tc.body).want(t, http.StatusBadRequest, "INVALID_FIELD", `(^|; )`+tc.field+`: `+instantRule)
				e.call(t, "DELETE", path, "").want(t, http.StatusNotFound, "SUPPLIER_NOT_FOUND", "")
			})
		}
		e.call(t, "PUT", path+"/contacts/"+otherUUID, `{"name": "A", "modifiedDate": "`+pastUTC9999+`"}`).
			want(t, http.StatusBadRequest, "INVALID_FIELD", `^modifiedDate: `+instantRule)
		e.call(t, "POST", "/communities/acme-au/tokens", `{"name": "t", "scopes": ["suppliers:read"], "expires": "`+pastUTC9999+`"}`).
			want(t, http.StatusBadRequest, "INVALID_FIELD", `^expires: `+instantRule)
		if a := e.call(t, "GET", "/communities/acme-au/tokens", ""); !bytes.Equal(bytes.TrimSpace(a.body), []byte(`{"content":[]}`)) {
			t.Errorf("the refused token was stored: %s", a.body)
		}
	})
}

// Over HTTP on both stores: a community that holds a modifiedDate of
// 9999-12-31T23:59:59.999999Z (the last one RFC 3339 can write, here from
// a data file) refuses every write that would stamp a later one with a
// 409 CONFLICT, and every read of it stays a 200, unchanged.
func TestAdminStampPast9999(t *testing.T) {
	forAdminStores(t, func(t *testing.T, e *adminEnv) {
		sup := adminSupplier(t)
		im, ok := e.store.(interface {
			ImportStream(ctx context.Context, r io.Reader) (datafile.ImportCounts, error)
		})
		if !ok {
			t.Fatalf("%T has no ImportStream", e.store)
		}
		atEnd := strings.Replace(sup, `"2022-06-01T15:09:45Z"`, `"`+lastStamp+`"`, 1)
		file := `{"communities": [{"id": "ends", "name": "Ends", "region": "NZ", "suppliers": [` + atEnd + `]}]}`
		if _, err := im.ImportStream(context.Background(), strings.NewReader(file)); err != nil {
			t.Fatal(err)
		}
		token := e.token(t, "ends")
		reads := []string{
			"/public/community/suppliers", "/public/community/suppliers?sort=modifiedDate,desc",
			"/public/community/suppliers?modifiedSince=" + lastStamp,
			"/public/community/suppliers/" + adminSupplierID,
			"/public/community/suppliers/" + adminSupplierID + "/contacts",
			"/public/community/suppliers/" + adminSupplierID + "/remittance-addresses",
		}
		read := func(t *testing.T) map[string][]byte {
			t.Helper()
			out := map[string][]byte{}
			for _, p := range reads {
				status, body := e.publicGet(t, p, "Authorization", "Bearer "+token)
				if status != http.StatusOK {
					t.Fatalf("GET %s: %d, want 200: %s", p, status, body)
				}
				out[p] = body
			}
			return out
		}
		before := read(t)
		var got struct{ ModifiedDate string }
		if err := json.Unmarshal(before["/public/community/suppliers/"+adminSupplierID], &got); err != nil || got.ModifiedDate != lastStamp {
			t.Fatalf("the imported supplier reads modifiedDate %q (%v), want %s", got.ModifiedDate, err, lastStamp)
		}

		ends := "/communities/ends/suppliers/"
		renamed := strings.Replace(sup, "Brightline Cleaning Services", "Brightline Cleaning", 1)
		for _, w := range []struct{ method, path, body string }{
			{"PUT", ends + otherUUID, strings.Replace(sup, adminSupplierID, otherUUID, 1)},
			{"PUT", ends + adminSupplierID, renamed},
			{"PUT", ends + adminSupplierID + "/contacts/" + otherUUID, `{"name": "A"}`},
			{"PUT", ends + adminSupplierID + "/remittance-addresses/" + otherUUID,
				`{"address": {"line1": "1 Queen St", "city": "Auckland", "country": "NZ"}}`},
			{"DELETE", ends + adminSupplierID, ""},
		} {
			e.call(t, w.method, w.path, w.body).want(t, http.StatusConflict, "CONFLICT",
				`no modifiedDate is left for a write: the community holds one at 9999-12-31T23:59:59.999999Z`)
		}
		// A write equal to what is stored stamps nothing: still a 200.
		e.call(t, "PUT", ends+adminSupplierID, atEnd).want(t, http.StatusOK, "", "")

		after := read(t)
		for _, p := range reads {
			if !bytes.Equal(before[p], after[p]) {
				t.Errorf("GET %s changed after refused writes:\n%s\nthen\n%s", p, before[p], after[p])
			}
		}
		if status, _ := e.publicGet(t, "/public/community/suppliers/"+otherUUID, "Authorization", "Bearer "+token); status != http.StatusNotFound {
			t.Errorf("the refused new supplier: GET %d, want 404", status)
		}
	})
}
