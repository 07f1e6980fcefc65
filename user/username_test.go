package user_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/user"
)

// Issue 19 item 10: a username may not hold default-ignorable code points
// (Default_Ignorable_Code_Point) or bidirectional controls (Bidi_Control):
// each is a 400 naming username and the rule, on create, update and
// Modify alike, and in a data file's users (User.Validate).
func TestUsernameInvisibleCharacters(t *testing.T) {
	refused := []rune{
		0x00AD,                 // soft hyphen
		0x034F,                 // combining grapheme joiner
		0x061C,                 // Arabic letter mark (Bidi_Control)
		0x115F,                 // Hangul choseong filler
		0x180B,                 // Mongolian free variation selector
		0x180E,                 // Mongolian vowel separator
		0x200B, 0x200C, 0x200D, // zero width space, non-joiner, joiner
		0x200E, 0x200F, // left-to-right and right-to-left marks
		0x202A, 0x202B, 0x202C, 0x202D, 0x202E, // embeddings and overrides
		0x2060, 0x2061, 0x2064, // word joiner, invisible operators
		0x2066, 0x2067, 0x2068, 0x2069, // isolates
		0x3164,                    // Hangul filler
		0xFE0F,                    // variation selector 16
		0xFEFF,                    // byte order mark
		0xFFA0,                    // halfwidth Hangul filler
		0x1D173,                   // musical symbol begin beam
		0xE0001, 0xE0041, 0xE01EF, // tags, variation selector 256
		0xE0FFF, // the last reserved default-ignorable
	}
	for _, r := range refused {
		for _, name := range []string{string(r) + "jsmith", "j" + string(r) + "smith", "jsmith" + string(r) + "x"} {
			t.Run(fmt.Sprintf("%U in %+q", r, name), func(t *testing.T) {
				_, err := user.Input{Username: &name}.Prepare(user.OpCreate)
				wantUsernameRule(t, err, fmt.Sprintf("U+%04X", r))
				err = user.User{ID: "x", Username: name}.Validate()
				wantUsernameRule(t, err, fmt.Sprintf("U+%04X", r))
			})
		}
	}
	// Characters of the format category the property leaves visible, and
	// ordinary non-ASCII letters, are accepted.
	accepted := []string{
		"jos\u00e9", "\u5f20\u4f1f", "\u0645\u062d\u0645\u062f", "\u00f1o\u00f1o",
		"\u0600x",  // Arabic number sign: Prepended_Concatenation_Mark
		"a\ufff9b", // interlinear annotation anchor
		"a\U00013430b",
		"j smith", // an inner space is white space, not ignorable
	}
	for _, name := range accepted {
		if _, err := (user.Input{Username: &name}).Prepare(user.OpCreate); err != nil {
			t.Errorf("username %+q: %v; want accepted", name, err)
		}
	}
	// Other text fields keep such characters: they are display text, sent
	// back as they came (docs: users.md "Usernames").
	dn := "Smith\u200b"
	if _, err := (user.Input{Username: new("jsmith"), DisplayName: &dn}).Prepare(user.OpCreate); err != nil {
		t.Errorf("a displayName with U+200B: %v; want accepted", err)
	}
}

func wantUsernameRule(tb testing.TB, err error, cp string) {
	tb.Helper()
	var ve *procure.ValidationError
	if !errors.As(err, &ve) {
		tb.Fatalf("err = %v; want a *procure.ValidationError", err)
	}
	for _, f := range ve.Fields {
		if f.Field == "username" && strings.Contains(f.Rule, "invisible") && strings.Contains(f.Rule, "bidirectional") && strings.Contains(f.Rule, cp) {
			return
		}
	}
	tb.Errorf("err = %v; want a username error naming the rule and %s", err, cp)
}

// Issue 19 item 10: usernames are stored and looked up in NFC, so "é"
// composed and decomposed are one user.
func TestUsernameNFC(t *testing.T) {
	ctx := context.Background()
	svc, store := newService(t)
	got, err := svc.Create(ctx, commA, user.Input{Username: new(" Jose\u0301 ")})
	if err != nil {
		t.Fatal(err)
	}
	if got.Username != "Jos\u00e9" {
		t.Errorf("stored username %+q; want the NFC form %+q", got.Username, "Jos\u00e9")
	}
	for _, name := range []string{"jos\u00e9", "JOSE\u0301", "Jos\u00e9"} {
		u, err := svc.Get(ctx, commA, name)
		if err != nil || u.ID != got.ID {
			t.Errorf("Get(%+q) = %q, %v; want %q", name, u.ID, err, got.ID)
		}
		if u, err := store.UserByUsername(ctx, commA, name); err != nil || u.ID != got.ID {
			t.Errorf("store.UserByUsername(%+q) = %q, %v; want %q", name, u.ID, err, got.ID)
		}
	}
	if _, err := svc.Create(ctx, commA, user.Input{Username: new("jos\u00e9")}); !errors.Is(err, user.ErrDuplicateUsername) {
		t.Errorf("create the composed form beside the decomposed = %v; want ErrDuplicateUsername", err)
	}
	// A decomposed username of 255 characters in NFC is not too long.
	long := strings.Repeat("e\u0301", 255)
	if _, err := svc.Create(ctx, commA, user.Input{Username: &long}); err != nil {
		t.Errorf("255 characters in NFC, 510 decomposed: %v; want accepted", err)
	}
}
