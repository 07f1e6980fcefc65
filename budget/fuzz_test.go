package budget_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"strings"
	"testing"

	"github.com/procurekit/procure/budget"
)

// Fuzz targets of the parsers that read outside input (issue 11). CI runs
// their seed corpora (testdata/fuzz) as ordinary tests; run one with
//
//	go test -run='^$' -fuzz='^FuzzParseAmount$' -fuzztime=2m -parallel=1 ./budget/

func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"125.50", "-3", "+0.5", " 10.50 ", "0", "00012.3400", "1e3", "NaN", ".", "1.", ".5", "12,50",
		"123456789012345678", "1234567890123456789", "-12345678901234567890123.5", strings.Repeat("9", 51), "", " ", "１２"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := budget.ParseAmount(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseAmount(%q): an error without a rule", s)
			}
			return
		}
		// Accepted: the decimal's text reads back as the same number, with
		// the same scale.
		back, err := budget.ParseAmount(d.String())
		if err != nil {
			t.Fatalf("ParseAmount(%q) = %s, which does not read back: %v", s, d, err)
		}
		if !back.Equal(d) {
			t.Fatalf("ParseAmount(%q) = %s; read back as %s", s, d, back)
		}
		// The exact text (sign, digits, scale) is kept: trimming and a
		// leading plus aside, it is what was sent, up to leading zeros.
		trimmed := strings.TrimPrefix(strings.TrimSpace(s), "+")
		if !strings.ContainsAny(trimmed, "123456789") && !d.IsZero() {
			t.Fatalf("ParseAmount(%q) = %s; want zero", s, d)
		}
		if len(strings.TrimSpace(s)) > budget.MaxAmountLength {
			t.Fatalf("ParseAmount accepted %d characters", len(strings.TrimSpace(s)))
		}
	})
}

func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{
		"account,budget\n6100-200,1000.00\n6100-300,50\n",
		"\uFEFFAccount , Budget\r\n A ,-20.50\r\n",
		"budget,note,account\n1,\"a, b\",X\n",
		"account,budget\nA,1\nA,2\n",
		"account,budget\n,1\n",
		"account,budget\nA,1e3\n",
		"account\nA\n",
		"account,budget\nA\n",
		"account,budget\n\"A,1\n",
		"",
		"account,budget\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		table, err := budget.ReadCSV(bytes.NewReader(data), "fuzz.csv")
		if err != nil {
			if !errors.Is(err, budget.ErrBadTable) || !strings.Contains(err.Error(), "fuzz.csv") {
				t.Fatalf("ReadCSV error %v; want one matching ErrBadTable that names the file", err)
			}
			return
		}
		// Accepted: every data row is in the table with its budget, and
		// the table written back as CSV reads as the same table.
		rows := csvRows(t, data)
		if table.Len() != len(rows) || table.Len() == 0 {
			t.Fatalf("table of %d accounts from %d rows", table.Len(), len(rows))
		}
		var out bytes.Buffer
		w := csv.NewWriter(&out)
		_ = w.Write([]string{"account", "budget"})
		for _, r := range rows {
			got, ok := table.Budget(r[0])
			want, err := budget.ParseAmount(r[1])
			if !ok || err != nil || !got.Equal(want) {
				t.Fatalf("account %q: budget %s (%v); want %s (%v)", r[0], got, ok, want, err)
			}
			_ = w.Write([]string{r[0], got.String()})
		}
		w.Flush()
		again, err := budget.ReadCSV(&out, "again.csv")
		if err != nil {
			t.Fatalf("the table written back does not read: %v\n%s", err, out.Bytes())
		}
		for _, r := range rows {
			a, _ := again.Budget(r[0])
			b, _ := table.Budget(r[0])
			if !a.Equal(b) {
				t.Fatalf("account %q: %s written back reads %s", r[0], b, a)
			}
		}
	})
}

// csvRows returns the (account, budget) cells of an accepted table, the
// account trimmed, by the rules ReadCSV documents.
func csvRows(t *testing.T, data []byte) [][2]string {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("accepted input does not read as CSV: %v", err)
	}
	ac, bc := -1, -1
	for i, h := range recs[0] {
		switch strings.ToLower(strings.TrimSpace(h)) {
		case "account":
			ac = i
		case "budget":
			bc = i
		}
	}
	var rows [][2]string
	for _, rec := range recs[1:] {
		rows = append(rows, [2]string{strings.TrimSpace(rec[ac]), rec[bc]})
	}
	return rows
}
