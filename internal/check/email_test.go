package check_test

import (
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/check"
)

type mailbox struct {
	Email string `json:"email" validate:"email"`
}

func TestPlainEmail(t *testing.T) {
	for s, want := range map[string]bool{
		"jo@acme.example":           true,
		"a.b+c_d-e@mail.co.nz":      true,
		"J.Doe@Example.COM":         true,
		"jo@localhost":              false, // one label
		"jo@acme.c":                 false, // a one-letter top-level label
		"jo@acme.123":               false,
		".jo@acme.example":          false,
		"jo.@acme.example":          false,
		"j..o@acme.example":         false,
		"jo@-acme.example":          false,
		"jo@acme.example.":          false,
		"jo@acme..example":          false,
		"jo@@acme.example":          false,
		"@acme.example":             false,
		"\"jo smith\"@acme.example": false, // valid, but not plain: the validator decides
		"jö@acme.example":           false,
		"":                          false,
	} {
		if got := check.PlainEmail(s); got != want {
			t.Errorf("PlainEmail(%q) = %v; want %v", s, got, want)
		}
	}
}

// FuzzPlainEmail: whatever PlainEmail accepts, the validator's email rule
// accepts (it may refuse what the validator takes: then the validator is
// asked).
func FuzzPlainEmail(f *testing.F) {
	for _, s := range []string{"jo@acme.example", "a.b+c_d-e@mail.co.nz", "x@y.zz", "a-b@c-d.e-f.gh", "1@2.ab", "jo@acme.c0m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !check.PlainEmail(s) {
			return
		}
		if err := check.Struct(procure.SourceBody, mailbox{Email: s}); err != nil {
			t.Fatalf("PlainEmail(%q) is true but the validator refuses it: %v", s, err)
		}
	})
}
