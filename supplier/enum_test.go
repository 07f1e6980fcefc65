package supplier_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/procurekit/procure/supplier"
)

// enum is what every enum type of the package offers.
type enum interface {
	~string
	Allowed() []string
	Valid() bool
}

// checkEnum: every allowed value survives a JSON round trip; unknown
// values, other cases, and non-strings are rejected naming the field;
// JSON null is the empty (absent) value.
func checkEnum[T enum](t *testing.T, field string, want []string) {
	t.Helper()
	var zero T
	if got := zero.Allowed(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s: Allowed() = %v, want %v (the spec's order)", field, got, want)
	}
	for _, v := range want {
		b, err := json.Marshal(T(v))
		if err != nil {
			t.Fatalf("%s: Marshal(%s): %v", field, v, err)
		}
		var got T
		if err := json.Unmarshal(b, &got); err != nil {
			t.Errorf("%s: Unmarshal(%s): %v", field, b, err)
		}
		if string(got) != v || !got.Valid() {
			t.Errorf("%s: round trip of %s gave %q (valid %v)", field, v, got, got.Valid())
		}
	}
	for _, bad := range []string{`"UNKNOWN"`, `"` + strings.ToLower(want[0]) + `"`, `""`, `" ` + want[0] + `"`} {
		var got T
		err := json.Unmarshal([]byte(bad), &got)
		if err == nil {
			t.Errorf("%s: Unmarshal(%s) accepted %q", field, bad, got)
			continue
		}
		if !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), "must be one of "+strings.Join(want, ", ")) {
			t.Errorf("%s: Unmarshal(%s): error %q should name the field and the allowed values", field, bad, err)
		}
		if T(strings.Trim(bad, `"`)).Valid() {
			t.Errorf("%s: Valid(%s) = true", field, bad)
		}
	}
	for _, bad := range []string{`1`, `true`, `["` + want[0] + `"]`, `{}`} {
		var got T
		if err := json.Unmarshal([]byte(bad), &got); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: Unmarshal(%s): err = %v, want an error naming the field", field, bad, err)
		}
	}
	got := T(want[0])
	if err := json.Unmarshal([]byte(`null`), &got); err != nil || got != "" {
		t.Errorf("%s: Unmarshal(null) = %q, %v; want the empty value", field, got, err)
	}
}

func TestEnums(t *testing.T) {
	t.Run("ProfileType", func(t *testing.T) {
		checkEnum[supplier.ProfileType](t, "profileType", []string{"COMPANY", "INDIVIDUAL"})
	})
	t.Run("TaxIdentificationType", func(t *testing.T) {
		checkEnum[supplier.TaxIdentificationType](t, "taxIdentificationType", []string{"SSN", "EIN", "ITIN", "GIIN", "FOREIGN_TIN"})
	})
	t.Run("TinVerificationStatus", func(t *testing.T) {
		checkEnum[supplier.TinVerificationStatus](t, "tinVerificationStatus", []string{"MATCHED", "NOT_MATCHED", "NO_RESULT", "PENDING"})
	})
	t.Run("ConnectionState", func(t *testing.T) {
		checkEnum[supplier.ConnectionState](t, "connectionState", []string{"CONNECTED", "PENDING", "DISCONNECTED"})
	})
	t.Run("TenantType", func(t *testing.T) {
		checkEnum[supplier.TenantType](t, "managedBy", []string{"COMMUNITY", "SUPPLIER"})
	})
	t.Run("BankAccountType", func(t *testing.T) {
		checkEnum[supplier.BankAccountType](t, "bankAccountType", []string{"CHECKING", "SAVINGS"})
	})
	t.Run("DepositFormat", func(t *testing.T) {
		checkEnum[supplier.DepositFormat](t, "depositFormat", []string{"UNSPECIFIED", "CCD", "CTX"})
	})
	t.Run("TermType", func(t *testing.T) {
		checkEnum[supplier.TermType](t, "termType", []string{"DAYS_AFTER_THE_INVOICE_DATE", "OF_THE_CURRENT_MONTH", "OF_THE_FOLLOWING_MONTH", "IMMEDIATELY"})
	})
}

// TestRecordJSONRejectsUnknownEnum: a whole record with an unknown enum
// value does not decode, and the error says which field.
func TestRecordJSONRejectsUnknownEnum(t *testing.T) {
	const doc = `{"id":"6f1c1a52-6a5e-4c55-9d37-1f7d6c0a0001","profileType":"COMPANY","connectionState":"LINKED",
		"modifiedDate":"2026-01-01T00:00:00Z","createdDate":"2026-01-01T00:00:00Z"}`
	var r supplier.Record
	err := json.Unmarshal([]byte(doc), &r)
	if err == nil || !strings.Contains(err.Error(), "connectionState") || !strings.Contains(err.Error(), `"LINKED"`) {
		t.Fatalf("Unmarshal: err = %v, want one naming connectionState and the value", err)
	}
}
