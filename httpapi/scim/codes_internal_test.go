package scim

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// scanCodes is a fast path of decodeCodesJSON: wherever it answers, it
// answers as encoding/json does (the same codes and count), and it
// declines (ok false) rather than guess.
func checkScanCodes(t *testing.T, value []byte) {
	t.Helper()
	if !json.Valid(value) || !utf8.Valid(value) {
		return // scanCodes reads bodies readSCIMBytes and encoding/json have accepted
	}
	codes, n, ok := scanCodes(value, 3)
	if !ok {
		return
	}
	want, wantN, err := decodeCodesJSON(value)
	if err != nil {
		t.Fatalf("%s: scanCodes read %d codes %v; encoding/json refuses it: %v", value, n, codes, err)
	}
	if n != wantN {
		t.Fatalf("%s: scanCodes counts %d entries; encoding/json %d", value, n, wantN)
	}
	if n > 3 {
		if codes != nil {
			t.Fatalf("%s: over the limit, scanCodes kept %v", value, codes)
		}
		return
	}
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Fatalf("%s: (-encoding/json +scanCodes):\n%s", value, diff)
	}
}

func TestScanCodesAgreesWithJSON(t *testing.T) {
	for _, v := range scanCodesSeeds {
		t.Run(v, func(t *testing.T) { checkScanCodes(t, []byte(v)) })
	}
	// The forms it must read itself.
	for _, v := range []string{`["A","B"]`, `[{"code":"A"}, {"code":"B"}]`, ` [ "A" , {"code" : "B"} ] `, `[]`} {
		if _, _, ok := scanCodes([]byte(v), 3); !ok {
			t.Errorf("%s: scanCodes declines a plain list", v)
		}
	}
}

var scanCodesSeeds = []string{
	`[]`, ` [ ] `, `["A"]`, `["A","B","C"]`, `["A","B","C","D","E"]`, `[{"code":"A"}]`, `[{"code":"A"},"B"]`,
	`[ {"code" : "A" } , "B" ]`, "[\n\"A\"\n]", `["A\"B"]`, `["\u00e9"]`, `[{"code":"A","x":1}]`, `[{"x":1,"code":"A"}]`,
	`[{"CODE":"A"}]`, `[{}]`, `[1]`, `[null]`, `["A",]`, `{"code":"A"}`, `"A"`, `null`, `[["A"]]`, `[{"code":null}]`,
	`[{"code":"A"}, {"code":"A"}]`, `["é", "日本"]`, `[""]`, `[{"code":""}]`,
}

func FuzzScanCodes(f *testing.F) {
	for _, v := range scanCodesSeeds {
		f.Add([]byte(v))
	}
	f.Fuzz(func(t *testing.T, value []byte) { checkScanCodes(t, value) })
}
