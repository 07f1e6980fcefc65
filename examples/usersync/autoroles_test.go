package main

import (
	"net/http"
	"strings"
	"testing"
)

// Issue 13 part 7: re-running on an unchanged CSV against a community with
// an auto-role (EMPLOYEE, which the CSV lacks) sends no PUT and says
// "unchanged"; the dry run says the same. No -auto-roles flag: the server
// announces its auto-roles in the pre-check.
func TestRerunWithAutoRolesWritesNothing(t *testing.T) {
	a := newAPI(t, "EMPLOYEE")
	file := writeFile(t, "users.csv", exportCSV)
	if code, out, errOut := runSync(t, a, "-file", file); code != 0 || !strings.Contains(out, "created 3, updated 0, unchanged 0, failed 0") {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errOut)
	}
	if roles := stored(t, a, "ben@example.com").Roles; len(roles) != 2 || roles[1].Code != "EMPLOYEE" {
		t.Fatalf("ben's roles %v; want BUYER and the auto-role EMPLOYEE", roles)
	}
	posts, puts := a.count(http.MethodPost), a.count(http.MethodPut)

	code, out, _ := runSync(t, a, "-file", file, "-dry-run", "-v")
	if code != 0 || strings.Contains(out, "would update") || !strings.Contains(out, "would be created 0, updated 0, unchanged 3") {
		t.Errorf("dry run: exit %d\n%s", code, out)
	}
	code, out, _ = runSync(t, a, "-file", file)
	if code != 0 || !strings.Contains(out, "created 0, updated 0, unchanged 3, failed 0") {
		t.Errorf("second run: exit %d\n%s", code, out)
	}
	if a.count(http.MethodPost) != posts || a.count(http.MethodPut) != puts {
		t.Errorf("the dry run and the second run wrote: %d POST and %d PUT", a.count(http.MethodPost)-posts, a.count(http.MethodPut)-puts)
	}

	// A real change still goes through, and the dry run agrees with it.
	changed := strings.Replace(exportCSV, "ben@example.com,,Ben,ben@example.com,,BUYER,,", "ben@example.com,,Ben,ben@example.com,,APPROVER,,", 1)
	f2 := writeFile(t, "users.csv", changed)
	if _, out, _ := runSync(t, a, "-file", f2, "-dry-run"); !strings.Contains(out, "ben@example.com: would update (roles)") || !strings.Contains(out, "would be created 0, updated 1, unchanged 2") {
		t.Errorf("dry run of a role change:\n%s", out)
	}
	if _, out, _ := runSync(t, a, "-file", f2); !strings.Contains(out, "created 0, updated 1, unchanged 2, failed 0") || a.count(http.MethodPut) != puts+1 {
		t.Errorf("real run of a role change (%d PUT):\n%s", a.count(http.MethodPut)-puts, out)
	}
}
