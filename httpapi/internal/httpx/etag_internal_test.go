package httpx

import (
	"net/http/httptest"
	"testing"
)

// IfNoneMatch follows RFC 9110 13.1.2: weak comparison, "*", lists,
// several header lines, and a malformed value matches nothing.
func TestIfNoneMatch(t *testing.T) {
	const etag = `W/"3"`
	tests := []struct {
		name   string
		values []string
		want   bool
	}{
		{"absent", nil, false},
		{"same weak tag", []string{`W/"3"`}, true},
		{"strong form of the tag", []string{`"3"`}, true},
		{"other version", []string{`W/"2"`}, false},
		{"star", []string{`*`}, true},
		{"star with space", []string{` * `}, true},
		{"list holding it", []string{`W/"1", W/"2", "3"`}, true},
		{"list without it", []string{`W/"1", W/"2"`}, false},
		{"second header line", []string{`W/"1"`, `W/"3"`}, true},
		{"comma inside an opaque tag", []string{`"a,3", "b"`}, false},
		{"tag that is a prefix", []string{`W/"33"`}, false},
		{"unquoted", []string{`3`}, false},
		{"unterminated", []string{`W/"3`}, false},
		{"garbage after a tag", []string{`W/"1" x, W/"3"`}, false},
		{"empty", []string{``}, false},
		{"lower-case weak prefix is not weak", []string{`w/"3"`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			for _, v := range tt.values {
				r.Header.Add("If-None-Match", v)
			}
			if got := IfNoneMatch(r, etag); got != tt.want {
				t.Errorf("IfNoneMatch(%q, %s) = %v; want %v", tt.values, etag, got, tt.want)
			}
		})
	}
}
