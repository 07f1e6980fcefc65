package check_test

import (
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/check"
)

// Instants are accepted within the years 1 to 9999 of their UTC form, on
// its own and through the validator tag "instant".
func TestInstant(t *testing.T) {
	minus1 := time.FixedZone("", -3600)
	plus1 := time.FixedZone("", 3600)
	tests := []struct {
		name string
		t    time.Time
		ok   bool
	}{
		{"an ordinary date", time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC), true},
		{"the first instant", check.MinInstant, true},
		{"the last nanosecond", check.MaxInstant, true},
		{"one nanosecond past", check.MaxInstant.Add(time.Nanosecond), false},
		{"year 9999 at -01:00 (year 10000 in UTC)", time.Date(9999, 12, 31, 23, 30, 0, 0, minus1), false},
		{"year 9999 at +01:00", time.Date(9999, 12, 31, 23, 30, 0, 0, plus1), true},
		{"year 1 at +01:00 (year 0 in UTC)", time.Date(1, 1, 1, 0, 30, 0, 0, plus1), false},
		{"year 1 at -01:00", time.Date(1, 1, 1, 0, 30, 0, 0, minus1), true},
		{"year 0", time.Date(0, 6, 1, 0, 0, 0, 0, time.UTC), false},
		{"year 10000", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), false},
	}
	type dated struct {
		At  time.Time  `json:"at" validate:"instant"`
		Opt *time.Time `json:"opt,omitempty" validate:"omitempty,instant"`
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := check.Instant(tt.t); got != tt.ok {
				t.Errorf("Instant(%v) = %v, want %v", tt.t, got, tt.ok)
			}
			tm := tt.t
			err := check.Struct(procure.SourceBody, &dated{At: tt.t, Opt: &tm})
			if tt.ok {
				if err != nil {
					t.Errorf("the tag refuses it: %v", err)
				}
				return
			}
			want := "at: " + check.InstantRule + "; opt: " + check.InstantRule
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("the tag: %v, want %q", err, want)
			}
		})
	}
	if err := check.Struct(procure.SourceBody, &dated{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Errorf("an absent optional instant: %v", err)
	}
}
