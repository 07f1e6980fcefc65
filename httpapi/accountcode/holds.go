package accountcode

import (
	"context"
	"encoding/xml"
	"errors"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/httpapi/internal/httpx"
)

// HoldsPath is where a connector lists an account's holds.
const HoldsPath = Path + "/holds"

// HoldLister is a validator that keeps holds and can list them
// (budget.TableValidator is one).
type HoldLister interface {
	KeepsHolds() bool
	Holds(ctx context.Context, account string) ([]budget.Hold, error)
}

// The XML of the holds listing (docs: account-codes.md "Listing holds").
type xmlHolds struct {
	XMLName     xml.Name  `xml:"AccountCodeHolds"`
	Account     string    `xml:"Account"`
	Holds       []xmlHold `xml:"Holds>Hold"`
	Commitments []xmlHold `xml:"Commitments>Commitment"`
}

type xmlHold struct {
	RequisitionID string `xml:"RequisitionId"`
	Amount        string `xml:"Amount"`
	Held          string `xml:"Held"`
	Expires       string `xml:"Expires,omitempty"`
	Confirmed     string `xml:"Confirmed,omitempty"`
}

func xmlTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// HoldsHandler returns the handler of GET HoldsPath?account=X:
// the account's current holds and commitments as XML, behind the same
// authentication as the exchange (docs: account-codes.md "Listing
// holds"). A missing or blank account is 400; a validator that keeps no
// holds is 501; holds that cannot be read are 502.
func (h *Handler) HoldsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.authenticate(r); err != nil {
			h.log.InfoContext(r.Context(), "account code holds: authentication failed", "reason", err.Error())
			w.Header().Set("WWW-Authenticate", "Bearer")
			h.fail(w, r, err)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			h.fail(w, r, httpx.NewError(http.StatusMethodNotAllowed, httpx.CodeMethodNotAllowed,
				"method "+r.Method+" is not allowed on this path; allowed: GET, HEAD"))
			return
		}
		lister, ok := h.v.(HoldLister)
		if !ok || !lister.KeepsHolds() {
			h.fail(w, r, httpx.NewError(http.StatusNotImplemented, httpx.CodeNotImplemented, "this connector keeps no holds"))
			return
		}
		account := r.URL.Query().Get("account")
		switch {
		case account == "":
			h.fail(w, r, httpx.NewError(http.StatusBadRequest, httpx.CodeInvalidField, "account: the query parameter is required"))
			return
		case !utf8.ValidString(account) || len(account) > 1000:
			h.fail(w, r, httpx.NewError(http.StatusBadRequest, httpx.CodeInvalidField, "account: must be UTF-8 text of at most 1000 bytes"))
			return
		}
		hs, err := lister.Holds(r.Context(), account)
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				h.log.ErrorContext(r.Context(), "account code holds: listing failed", "err", err)
			}
			h.fail(w, r, httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamFailed, "the holds could not be read; the connector's log has the cause"))
			return
		}
		out := xmlHolds{Account: account, Holds: []xmlHold{}, Commitments: []xmlHold{}}
		for _, x := range hs {
			e := xmlHold{RequisitionID: x.Requisition, Amount: budget.FormatAmount(x.Amount), Held: xmlTime(x.Held),
				Expires: xmlTime(x.Expires), Confirmed: xmlTime(x.Confirmed)}
			if x.Committed() {
				out.Commitments = append(out.Commitments, e)
			} else {
				out.Holds = append(out.Holds, e)
			}
		}
		body, err := xml.Marshal(out)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		writeXML(w, http.StatusOK, append([]byte(xml.Header), body...))
	})
}
