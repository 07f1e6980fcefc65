package auth_test

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/procurekit/procure/auth"
)

// HashSecret is SHA-256 of the secret's bytes whatever its length (the
// short ones are copied to the stack first).
func TestHashSecretLengths(t *testing.T) {
	for _, n := range []int{0, 1, 32, 33, 60, 127, 128, 129, 1000} {
		secret := strings.Repeat("k", n)
		if got, want := auth.HashSecret(secret), auth.Hash(sha256.Sum256([]byte(secret))); got != want {
			t.Errorf("HashSecret of %d bytes = %s, want %s", n, got, want)
		}
	}
}
