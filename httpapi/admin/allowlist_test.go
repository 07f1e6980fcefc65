package admin_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
)

// An allowlist entry means the same wherever it is written: in a data file
// (imported into memstore and into pgstore), through the admin API, or read
// by auth.ParsePrefix, the one reader all of them call. An IPv6 zone is
// refused everywhere (an allowlist names networks, the same on every
// interface); white space around an entry is ignored everywhere.
func TestAllowlistEntriesAgree(t *testing.T) {
	entries := []string{
		"203.0.113.7", "203.0.113.7/24", "2001:db8::1", "2001:DB8::/32", "::ffff:192.0.2.1", "::ffff:192.0.2.0/120",
		" 10.1.2.3/8 ", "0.0.0.0/0",
		"fe80::1%eth0", "fe80::1%eth0/64", "fe80::1%25eth0",
		"", "10.0.0.0/33", "10.0.0.1/", "1.2.3", "not-an-ip", "203.0.113.7:80", "[2001:db8::1]",
	}
	type importer interface {
		ImportStream(context.Context, io.Reader) (datafile.ImportCounts, error)
	}
	forAdminStores(t, func(t *testing.T, e *adminEnv) {
		store, ok := e.store.(importer)
		if !ok {
			t.Fatalf("%T imports no data file", e.store)
		}
		for i, in := range entries {
			want, err := auth.ParsePrefix(in)
			wantOK := err == nil
			n := strconv.Itoa(i)

			// A data file.
			entry, _ := json.Marshal(in)
			file := `{"communities": [{"id": "file-` + n + `", "name": "F", "region": "AU", "serviceAccounts": [
				{"id": "sa-file-` + n + `", "keys": [{"key": "fixture-key-` + n + `", "active": true}], "allowedIPs": [` + string(entry) + `]}]}]}`
			_, err = store.ImportStream(context.Background(), strings.NewReader(file))
			switch {
			case wantOK && err != nil:
				t.Errorf("data file: %q refused (%v); auth reads %v", in, err, want)
			case !wantOK && err == nil:
				t.Errorf("data file: %q accepted; auth refuses it", in)
			case wantOK:
				sa, err := e.store.ServiceAccount(context.Background(), "sa-file-"+n)
				if err != nil {
					t.Fatal(err)
				}
				if len(sa.AllowedIPs) != 1 || sa.AllowedIPs[0] != want {
					t.Errorf("data file: %q stored as %v; auth reads %v", in, sa.AllowedIPs, want)
				}
			}

			// The admin API.
			c := "api-" + n
			e.community(t, c)
			got := e.call(t, http.MethodPut, "/communities/"+c+"/service-accounts/sa-api-"+n, `{"allowedIPs": [`+string(entry)+`]}`)
			switch {
			case !wantOK:
				got.want(t, http.StatusBadRequest, "INVALID_FIELD", `^allowedIPs\[0\]: must be an IP address or a CIDR`)
			case got.status != http.StatusOK:
				t.Errorf("admin API: %q refused (%d %s); auth reads %v", in, got.status, got.body, want)
			default:
				ips, _ := got.json(t)["allowedIPs"].([]any)
				if len(ips) != 1 || netip.MustParsePrefix(ips[0].(string)) != want {
					t.Errorf("admin API: %q stored as %v; auth reads %v", in, ips, want)
				}
			}
		}
	})
}
