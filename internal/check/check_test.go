package check_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/check"
)

type color string

func (c color) Valid() bool       { return c == "RED" || c == "BLUE" }
func (c color) Allowed() []string { return []string{"RED", "BLUE"} }

type inner struct {
	Code string `json:"code" validate:"required,max=3"`
}

type sample struct {
	Name  string  `json:"name" validate:"required,max=5"`
	Email string  `json:"email,omitempty" validate:"omitempty,email"`
	Color color   `json:"color,omitempty" validate:"omitempty,enum"`
	Items []inner `json:"items" validate:"unique=Code,dive"`
}

func TestStruct(t *testing.T) {
	tests := []struct {
		name string
		in   sample
		want string // "" = valid
	}{
		{"valid", sample{Name: "abc"}, ""},
		// Five characters of two bytes each: lengths count characters.
		{"max counts characters not bytes", sample{Name: "ééééé"}, ""},
		{"too long", sample{Name: "ééééééé"}, "name: must be at most 5 characters"},
		{"required", sample{}, "name: is required"},
		{"email", sample{Name: "a", Email: "not-an-email"}, "email: must be a valid email address"},
		{"enum", sample{Name: "a", Color: "GREEN"}, `color: must be one of RED, BLUE (got "GREEN")`},
		{"nested path", sample{Name: "a", Items: []inner{{Code: "ok"}, {Code: "toolong"}}}, "items[1].code: must be at most 3 characters"},
		{"unique by field", sample{Name: "a", Items: []inner{{Code: "x"}, {Code: "x"}}}, "items: entries must be unique by code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := check.Struct(procure.SourceBody, &tt.in)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			var v *procure.ValidationError
			if !errors.As(err, &v) || v.Source != procure.SourceBody {
				t.Fatalf("error %#v is not a body ValidationError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}
