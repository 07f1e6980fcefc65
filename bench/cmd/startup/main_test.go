package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A two-supplier data file in the format of docs: datafile.md.
const smallFile = `{"communities":[{"id":"c1","name":"C One","region":"NZ",
 "tokens":[{"token":"demo-token-startup-test","scopes":["suppliers:read"]}],
 "suppliers":[
  {"id":"0b9d2c3e-1f4a-4b5c-8d6e-7f8091a2b3c4","name":"Kōwhai Plumbing","profileType":"COMPANY",
   "modifiedDate":"2025-01-02T03:04:05Z","createdDate":"2024-01-02T03:04:05Z",
   "contacts":[{"id":"1b9d2c3e-1f4a-4b5c-8d6e-7f8091a2b3c4","name":"Aroha Ngata","modifiedDate":"2025-01-02T03:04:05Z","createdDate":"2024-01-02T03:04:05Z"},
               {"id":"2b9d2c3e-1f4a-4b5c-8d6e-7f8091a2b3c4","name":"Tāne Wēpū","modifiedDate":"2025-01-02T03:04:05Z","createdDate":"2024-01-02T03:04:05Z"}],
   "remittanceAddresses":[{"id":"3b9d2c3e-1f4a-4b5c-8d6e-7f8091a2b3c4","address":{"line1":"1 Queen Street","city":"Auckland","country":"New Zealand"},"modifiedDate":"2025-01-02T03:04:05Z","createdDate":"2024-01-02T03:04:05Z"}]},
  {"id":"4b9d2c3e-1f4a-4b5c-8d6e-7f8091a2b3c4","firstName":"Zoë","lastName":"Smith","profileType":"INDIVIDUAL",
   "modifiedDate":"2025-01-02T03:04:05Z","createdDate":"2024-01-02T03:04:05Z"}],
 "users":[{"id":"u1","username":"zoe.smith"}]}]}`

func writeSmall(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data.json")
	if err := os.WriteFile(path, []byte(smallFile), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMeasure(t *testing.T) {
	m, err := measure(writeSmall(t))
	if err != nil {
		t.Fatal(err)
	}
	if m.suppliers != 2 || m.contacts != 2 || m.addresses != 1 || m.users != 1 {
		t.Errorf("counted %d suppliers, %d contacts, %d addresses, %d users; want 2, 2, 1, 1", m.suppliers, m.contacts, m.addresses, m.users)
	}
	if m.rssBefore <= 0 || m.rssAfter <= 0 || m.rssPeak < m.rssAfter {
		t.Errorf("resident memory: before %d, after %d, peak %d", m.rssBefore, m.rssAfter, m.rssPeak)
	}
	if m.store == nil || m.read <= 0 || m.cpu <= 0 {
		t.Errorf("store %v, read %v, cpu %v", m.store, m.read, m.cpu)
	}
}

// With -data, run loads the file and prints the report; a bad file is an
// error naming it.
func TestRun(t *testing.T) {
	path := writeSmall(t)
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"-data", path}, &out, &errOut); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^data file: +0 MB, 2 suppliers \(1\.00 contacts and 0\.50 remittance addresses each on average\), 1 users$`),
		regexp.MustCompile(`(?m)^stream load: +\d+\.\ds \(memstore\.LoadFile: read, parse, validate and index in one pass\)$`),
		regexp.MustCompile(`(?m)^total: +\d+\.\ds wall, \d+\.\ds CPU \(user \+ system\)$`),
		regexp.MustCompile(`(?m)^resident: +\d+ MB after load and GC \(\d+ MB before reading\); peak \d+ MB$`),
		regexp.MustCompile(`(?m)^per supplier: +-?\d+ B resident \(\d+ B of live Go heap\)$`),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(strings.Replace(smallFile, `"NZ"`, `"EU"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"-data", bad}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "region") {
		t.Fatalf("run on a bad file = %v, want an error naming the file and the field", err)
	}
}

func TestProcStatus(t *testing.T) {
	rss, err := procStatus("VmRSS")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if rss < 1<<20 {
		t.Errorf("VmRSS = %d bytes, implausibly small", rss)
	}
	if _, err := procStatus("NoSuchField"); err == nil {
		t.Error("an unknown field gave no error")
	}
}
