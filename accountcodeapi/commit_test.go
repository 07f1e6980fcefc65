package accountcodeapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/accountcodeapi"
	"github.com/procurekit/procure/budget"
)

// The client's release and confirm (docs: account-codes.md "Release and
// confirm"): the message sent, and every way the answer can fail.
func TestClientReleaseConfirm(t *testing.T) {
	var mu sync.Mutex
	var sent string
	got := func() string {
		mu.Lock()
		defer mu.Unlock()
		return sent
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = r.Header.Get("Authorization") + " " + r.Header.Get("Content-Type") + " " + string(b)
		mu.Unlock()
		root := "AccountCodeReleaseResponse"
		if strings.Contains(string(b), "Confirm") {
			root = "AccountCodeConfirmResponse"
		}
		w.Header().Set("Content-Type", "application/xml")
		io.WriteString(w, "<"+root+"><RequisitionId>REQ-1</RequisitionId><Changed>5</Changed></"+root+">")
	}))
	t.Cleanup(srv.Close)
	c, err := accountcodeapi.New(srv.URL, accountcodeapi.Options{Token: "fixture-token"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if n, err := c.Release(ctx, "REQ-1"); n != 5 || err != nil {
		t.Errorf("Release = %d, %v; want 5", n, err)
	}
	want := "Bearer fixture-token application/xml; charset=utf-8 " + `<?xml version="1.0" encoding="UTF-8"?>` + "\n<AccountCodeReleaseRequest><RequisitionId>REQ-1</RequisitionId></AccountCodeReleaseRequest>\n"
	if got() != want {
		t.Errorf("sent %q\nwant %q", got(), want)
	}
	if n, err := c.Confirm(ctx, "REQ-1"); n != 5 || err != nil {
		t.Errorf("Confirm = %d, %v; want 5", n, err)
	}
	if !strings.Contains(got(), "<AccountCodeConfirmRequest><RequisitionId>REQ-1</RequisitionId></AccountCodeConfirmRequest>") {
		t.Errorf("sent %q; want a confirm", got())
	}

	faults := []struct {
		name    string
		handler http.HandlerFunc
		want    error
		wantMsg string
	}{
		{"501 from a connector without holds", reply(501, "application/xml", `<AccountCodeValidationError><Code>NOT_IMPLEMENTED</Code><Message>this connector keeps no holds</Message></AccountCodeValidationError>`),
			budget.ErrUnsupported, `answered 501 Not Implemented: NOT_IMPLEMENTED: "this connector keeps no holds"`},
		{"502", reply(502, "application/xml", `<AccountCodeValidationError><Code>UPSTREAM_FAILED</Code><Message>x</Message></AccountCodeValidationError>`),
			budget.ErrUnavailable, "answered 502 Bad Gateway: UPSTREAM_FAILED"},
		{"a check's reply", reply(200, "application/xml", respDoc(respLine("1", "Valid", ""))),
			budget.ErrMalformedReply, `the root element is "AccountCodeValidationResponse"; want AccountCodeReleaseResponse`},
		{"no Changed", reply(200, "application/xml", "<AccountCodeReleaseResponse><RequisitionId>REQ-1</RequisitionId></AccountCodeReleaseResponse>"),
			budget.ErrMalformedReply, "AccountCodeReleaseResponse has no Changed element"},
		{"another requisition", reply(200, "application/xml", "<AccountCodeReleaseResponse><RequisitionId>REQ-2</RequisitionId><Changed>1</Changed></AccountCodeReleaseResponse>"),
			budget.ErrMalformedReply, `about requisition "REQ-2", not "REQ-1"`},
		{"HTML", reply(200, "text/html", "<html/>"), budget.ErrMalformedReply, "not XML"},
		{"too slow", func(w http.ResponseWriter, r *http.Request) { stall(r) }, budget.ErrTimeout, ""},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			srv := httptest.NewServer(f.handler)
			t.Cleanup(srv.Close)
			c, err := accountcodeapi.New(srv.URL, accountcodeapi.Options{Timeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			n, err := c.Release(ctx, "REQ-1")
			if n != 0 || !errors.Is(err, f.want) || !strings.Contains(err.Error(), f.wantMsg) {
				t.Errorf("Release = %d, %v\nwant 0 and an error matching %v containing %q", n, err, f.want, f.wantMsg)
			}
		})
	}

	t.Run("a 501 to a check is unavailable, not unsupported", func(t *testing.T) {
		srv := httptest.NewServer(reply(501, "text/plain", "no"))
		t.Cleanup(srv.Close)
		c, err := accountcodeapi.New(srv.URL, accountcodeapi.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Validate(ctx, twoLines(t)); !errors.Is(err, budget.ErrUnavailable) || errors.Is(err, budget.ErrUnsupported) {
			t.Errorf("Validate = %v; want budget.ErrUnavailable only", err)
		}
	})

	t.Run("a bad requisition is not sent", func(t *testing.T) {
		mu.Lock()
		sent = ""
		mu.Unlock()
		for _, id := range []string{"", " ", strings.Repeat("r", budget.MaxRequisitionIDLength+1)} {
			if _, err := c.Confirm(ctx, id); !errors.Is(err, procure.ErrInvalid) {
				t.Errorf("Confirm(%.8q...) = %v; want procure.ErrInvalid", id, err)
			}
		}
		if got() != "" {
			t.Errorf("sent %q", got())
		}
	})
}
