package procure_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/procurekit/procure"
)

func TestCommunityValidate(t *testing.T) {
	ok := procure.Community{ID: "acme-au", Name: "Acme", Region: "AU", AutoRoles: []string{"EMPLOYEE"}}
	for _, c := range []struct {
		name  string
		edit  func(*procure.Community)
		field string // "" when valid
		rule  string
	}{
		{"valid", func(*procure.Community) {}, "", ""},
		{"id missing", func(c *procure.Community) { c.ID = "" }, "id", "is required"},
		{"id at 100", func(c *procure.Community) { c.ID = strings.Repeat("a", 100) }, "", ""},
		{"id at 101", func(c *procure.Community) { c.ID = strings.Repeat("a", 101) }, "id", "at most 100"},
		{"id with a space", func(c *procure.Community) { c.ID = "acme au" }, "id", "without white space"},
		{"id with a slash", func(c *procure.Community) { c.ID = "acme/au" }, "id", ""},
		{"name at 256", func(c *procure.Community) { c.Name = strings.Repeat("n", 256) }, "name", "at most 255"},
		{"name with NUL", func(c *procure.Community) { c.Name = "a\x00b" }, "name", "NUL"},
		{"region", func(c *procure.Community) { c.Region = "EU" }, "region", "one of AU, NZ, US, DEMO"},
		{"auto-role at 255", func(c *procure.Community) { c.AutoRoles = []string{strings.Repeat("r", 255)} }, "", ""},
		{"auto-role at 256", func(c *procure.Community) { c.AutoRoles = []string{"A", strings.Repeat("r", 256)} }, "autoRoles[1]", "at most 255"},
		{"auto-role blank", func(c *procure.Community) { c.AutoRoles = []string{" "} }, "autoRoles[0]", "is required"},
		{"auto-role twice", func(c *procure.Community) { c.AutoRoles = []string{"A", "A"} }, "autoRoles[1]", "unique"},
	} {
		t.Run(c.name, func(t *testing.T) {
			com := ok
			com.AutoRoles = append([]string(nil), ok.AutoRoles...)
			c.edit(&com)
			err := com.Validate(procure.SourceBody)
			if c.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v; want nil", err)
				}
				return
			}
			var ve *procure.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, procure.ErrInvalid) {
				t.Fatalf("Validate: %v; want a ValidationError", err)
			}
			for _, f := range ve.Fields {
				if f.Field == c.field && strings.Contains(f.Rule, c.rule) {
					return
				}
			}
			t.Errorf("Validate: %v; want field %s with a rule saying %q", err, c.field, c.rule)
		})
	}
}
