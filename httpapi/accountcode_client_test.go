package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/httpapi"
)

// The client moved to package accountcodeapi; httpapi's old names still
// compile and still work, against the connector of httpapi's names too.
func TestDeprecatedAccountCodeClient(t *testing.T) {
	valid := budget.ValidatorFunc(func(_ context.Context, req budget.Request) ([]budget.Result, error) {
		out := make([]budget.Result, len(req.Lines))
		for i, l := range req.Lines {
			out[i] = budget.Result{LineNumber: l.Number, Status: budget.Valid, Message: l.Account + "|" + budget.FormatAmount(l.Amount)}
		}
		return out, nil
	})
	mux := http.NewServeMux()
	httpapi.NewAccountCodeHandler(valid, httpapi.AccountCodeHandlerOptions{InsecureNoAuth: true}).Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	var client *httpapi.AccountCodeClient
	client, err := httpapi.NewAccountCodeClient(srv.URL+httpapi.AccountCodePath, httpapi.AccountCodeClientOptions{Timeout: httpapi.DefaultAccountCodeTimeout})
	if err != nil {
		t.Fatal(err)
	}
	amount, err := budget.ParseAmount("10.50")
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.Validate(context.Background(), budget.Request{Lines: []budget.Line{{Number: 1, Account: "6100-200", Amount: amount}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]budget.Result{{LineNumber: 1, Status: budget.Valid, Message: "6100-200|10.50"}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
