package budget_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/budget"
)

func TestAppendLinesJSON(t *testing.T) {
	lines := []budget.Line{
		line(t, 1, "6100-200", "125.50"),
		line(t, 2, `quote " back \ slash`, "-0.005"),
		line(t, 3, "tab\tnew\nline\x01 \u2028 é \xff", "12345678901234567890.123456789"),
	}
	got := string(budget.AppendLinesJSON(nil, lines, ""))
	// docs: account-codes.md "Stored procedure option": the lines as JSON text,
	// amounts as JSON numbers written exactly.
	want := `[{"line_number":1,"account":"6100-200","amount":125.50},` +
		`{"line_number":2,"account":"quote \" back \\ slash","amount":-0.005},` +
		`{"line_number":3,"account":"tab\tnew\nline\u0001 \u2028 é \ufffd","amount":12345678901234567890.123456789}]`
	if got != want {
		t.Fatalf("AppendLinesJSON:\n got %s\nwant %s", got, want)
	}
	// It is valid JSON whose strings read back as encoding/json reads them.
	var back []struct {
		LineNumber int         `json:"line_number"`
		Account    string      `json:"account"`
		Amount     json.Number `json:"amount"`
	}
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatalf("not valid JSON: %v", err)
	}
	if back[1].Account != lines[1].Account || back[2].Account != "tab\tnew\nline\x01 \u2028 é \uFFFD" || back[0].Amount != "125.50" {
		t.Errorf("read back %+v", back)
	}
}

func TestParseResultsJSON(t *testing.T) {
	good := []struct {
		name string
		json string
		want []budget.Result
	}{
		{"all fields", `[{"line_number":1,"status":"Valid","message":""},{"line_number":2,"status":"Warning","message":"close to the limit"}]`,
			[]budget.Result{{LineNumber: 1, Status: budget.Valid}, {LineNumber: 2, Status: budget.Warning, Message: "close to the limit"}}},
		{"message absent or null", `[{"line_number":1,"status":"Valid"},{"line_number":2,"status":"Invalid","message":null}]`,
			[]budget.Result{{LineNumber: 1, Status: budget.Valid}, {LineNumber: 2, Status: budget.Invalid}}},
		{"other fields ignored", `[{"line_number":-4,"status":"Valid","account":"x","extra":{"a":1}}]`,
			[]budget.Result{{LineNumber: -4, Status: budget.Valid}}},
		{"empty array", `[]`, []budget.Result{}},
	}
	for _, c := range good {
		t.Run(c.name, func(t *testing.T) {
			got, err := budget.ParseResultsJSON([]byte(c.json))
			if err != nil {
				t.Fatalf("ParseResultsJSON: %v", err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	bad := []struct{ name, json, wantErr string }{
		{"not JSON", `not json`, "the reply is not a JSON array of results"},
		{"an object", `{"line_number":1,"status":"Valid"}`, "the reply is not a JSON array of results"},
		{"null", `null`, "the reply is null"},
		{"trailing data", `[] []`, "the reply is not a JSON array of results"},
		{"a null item", `[null]`, "result [0] is null"},
		{"a number item", `[1]`, "the reply is not a JSON array of results"},
		{"no line number", `[{"status":"Valid"}]`, "result [0]: line_number is missing"},
		{"null line number", `[{"line_number":null,"status":"Valid"}]`, "result [0]: line_number is missing"},
		{"string line number", `[{"line_number":"1","status":"Valid"}]`, `result [0]: line_number must be an integer (got "\"1\"")`},
		{"fractional line number", `[{"line_number":1.5,"status":"Valid"}]`, `result [0]: line_number must be an integer (got "1.5")`},
		{"exponent line number", `[{"line_number":1e2,"status":"Valid"}]`, `line_number must be an integer`},
		{"no status", `[{"line_number":1,"message":"x"}]`, "result [0] (line 1): status is missing"},
		{"status not a string", `[{"line_number":1,"status":1}]`, "the reply is not a JSON array of results"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := budget.ParseResultsJSON([]byte(c.json))
			if !errors.Is(err, budget.ErrMalformedReply) || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %v; want ErrMalformedReply containing %q", err, c.wantErr)
			}
		})
	}
}

func TestParseProcedureParams(t *testing.T) {
	got, err := budget.ParseProcedureParams(" lines , finance_year,username ")
	if err != nil {
		t.Fatal(err)
	}
	want := []budget.ProcedureParam{budget.ParamLines, budget.ParamFinanceYear, budget.ParamUsername}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got, err := budget.ParseProcedureParams("lines,currency,requisition_id"); err != nil ||
		!cmp.Equal(got, []budget.ProcedureParam{budget.ParamLines, budget.ParamCurrency, budget.ParamRequisitionID}) {
		t.Errorf("ParseProcedureParams(lines,currency,requisition_id) = %v, %v", got, err)
	}
	for in, wantErr := range map[string]string{
		"username":          "the parameters must include lines",
		"lines,lines":       "parameter lines is listed twice",
		"lines,user":        `unknown parameter "user"`,
		"":                  `unknown parameter ""`,
		"lines,,username":   `unknown parameter ""`,
		"lines,requisition": `unknown parameter "requisition"`,
	} {
		if _, err := budget.ParseProcedureParams(in); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseProcedureParams(%q) = %v; want %q", in, err, wantErr)
		}
	}
}

func TestNewProcedureValidator(t *testing.T) {
	db := &sql.DB{} // never used: every case fails before
	for name, cfg := range map[string]budget.ProcedureConfig{
		"no database":  {Query: "SELECT 1"},
		"no query":     {DB: db, Query: "  "},
		"no lines arg": {DB: db, Query: "SELECT f($1)", Params: []budget.ProcedureParam{budget.ParamUsername}},
	} {
		if _, err := budget.NewProcedureValidator(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// docs: account-codes.md "Stored procedure option": a split line carries
// its splits with their allocated amounts, in the request's currency.
func TestAppendLinesJSONSplits(t *testing.T) {
	lines := []budget.Line{
		line(t, 1, "6100-200", "125.50"),
		splitLine(t, 2, "100.00", pct(t, "A", "33.3333"), pct(t, "B", "33.3333"), pct(t, "C", "33.3334")),
		splitLine(t, 3, "-10", amt(t, "A", "-4"), amt(t, `B "q"`, "-6.00")),
	}
	cases := []struct {
		currency, want string
	}{
		{"NZD", `[{"line_number":1,"account":"6100-200","amount":125.50},` +
			`{"line_number":2,"amount":100.00,"splits":[{"account":"A","amount":33.33,"percentage":33.3333},{"account":"B","amount":33.33,"percentage":33.3333},{"account":"C","amount":33.34,"percentage":33.3334}]},` +
			`{"line_number":3,"amount":-10,"splits":[{"account":"A","amount":-4},{"account":"B \"q\"","amount":-6.00}]}]`},
		// Thousandths of a dinar: the leftover goes further down.
		{"KWD", `[{"line_number":1,"account":"6100-200","amount":125.50},` +
			`{"line_number":2,"amount":100.00,"splits":[{"account":"A","amount":33.333,"percentage":33.3333},{"account":"B","amount":33.333,"percentage":33.3333},{"account":"C","amount":33.334,"percentage":33.3334}]},` +
			`{"line_number":3,"amount":-10,"splits":[{"account":"A","amount":-4},{"account":"B \"q\"","amount":-6.00}]}]`},
	}
	for _, c := range cases {
		got := string(budget.AppendLinesJSON(nil, lines, c.currency))
		if got != c.want {
			t.Errorf("AppendLinesJSON in %s:\n got %s\nwant %s", c.currency, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("not valid JSON: %s", got)
		}
	}
}
