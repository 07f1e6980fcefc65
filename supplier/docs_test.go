package supplier_test

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/procurekit/procure/supplier"
)

// docs/suppliers.md describes every JSON field of every supplier type, in
// the section of its type: a field added to a type and not to the page
// fails here.
func TestDocsNameEveryField(t *testing.T) {
	b, err := os.ReadFile("../docs/suppliers.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	section := func(heading string) string {
		i := strings.Index(doc, "\n"+heading+"\n")
		if i < 0 {
			t.Fatalf("docs/suppliers.md has no heading %q", heading)
		}
		rest := doc[i+len(heading)+2:]
		if j := regexp.MustCompile(`\n#{1,3} `).FindStringIndex(rest); j != nil {
			rest = rest[:j[0]]
		}
		return rest
	}
	for _, tc := range []struct {
		heading string
		typ     reflect.Type
	}{
		{"## SupplierSummary", reflect.TypeFor[supplier.Summary]()},
		{"## SupplierDetail", reflect.TypeFor[supplier.Detail]()},
		{"## SupplierContact", reflect.TypeFor[supplier.Contact]()},
		{"### Phone", reflect.TypeFor[supplier.Phone]()},
		{"## RemittanceAddress", reflect.TypeFor[supplier.RemittanceAddress]()},
		{"## Address", reflect.TypeFor[supplier.Address]()},
		{"## Address", reflect.TypeFor[supplier.Region]()},
		{"## BankAccount", reflect.TypeFor[supplier.BankAccount]()},
		{"## Emails", reflect.TypeFor[supplier.Emails]()},
		{"## SupplierSettings", reflect.TypeFor[supplier.Settings]()},
		{"## SupplierSettings", reflect.TypeFor[supplier.PaymentTerm]()},
		{"## SupplierSettings", reflect.TypeFor[supplier.BuyerGroup]()},
		{"## SupplierSettings", reflect.TypeFor[supplier.Tag]()},
	} {
		text := section(tc.heading)
		for i := range tc.typ.NumField() {
			f := tc.typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous || name == "-" || name == "" {
				continue
			}
			if !regexp.MustCompile(`\b` + name + `\b`).MatchString(text) {
				t.Errorf("docs/suppliers.md, %s: no word on %s's field %s", tc.heading, tc.typ.Name(), name)
			}
		}
	}
}
