package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// printAnswer writes a JSON answer to w, indented; with a path (-o), only
// the value at that path: a string as it is, anything else as JSON, null
// as an empty line.
func printAnswer(w io.Writer, answer []byte, path string) error {
	if path == "" {
		var b bytes.Buffer
		if err := json.Indent(&b, answer, "", "  "); err != nil {
			return fmt.Errorf("the server's answer is not JSON: %w", err)
		}
		b.WriteByte('\n')
		_, err := w.Write(b.Bytes())
		return err
	}
	v, err := valueAt(answer, path)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, v)
	return err
}

// valueAt returns the value at path ("keys.0.id") of the JSON document
// doc, as printAnswer prints it.
func valueAt(doc []byte, path string) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("the server's answer is not JSON: %w", err)
	}
	for _, step := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[step]
			if !ok {
				return "", fmt.Errorf("-o %s: the answer has no %q (it has %s)", path, step, memberNames(x))
			}
			v = next
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(x) {
				return "", fmt.Errorf("-o %s: %q is not an index of a list of %d", path, step, len(x))
			}
			v = x[i]
		default:
			return "", fmt.Errorf("-o %s: %q is inside a value that has no parts", path, step)
		}
	}
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func memberNames(m map[string]any) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// token and key as lists show them.
type tokenRow struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Scopes     []string `json:"scopes"`
	Expires    *string  `json:"expires"`
	Revoked    bool     `json:"revoked"`
	CreatedAt  string   `json:"createdAt"`
	LastUsedAt *string  `json:"lastUsedAt"`
}

type keyRow struct {
	ID         string  `json:"id"`
	Active     bool    `json:"active"`
	CreatedAt  string  `json:"createdAt"`
	LastUsedAt *string `json:"lastUsedAt"`
}

// lastUsedNote explains the LAST USED column of token and key lists
// (docs: admin.md "Last used").
const lastUsedNote = "LAST USED is kept to the minute: the server records at most one use a minute of each %s, so a use can take a minute to show."

// printTokens writes the answer of GET .../tokens as a table; a token
// whose expiry is before now is "expired".
func printTokens(w io.Writer, answer []byte, now time.Time) error {
	var list struct {
		Content []tokenRow `json:"content"`
	}
	if err := json.Unmarshal(answer, &list); err != nil {
		return fmt.Errorf("the server's answer is not a token list: %w", err)
	}
	if len(list.Content) == 0 {
		_, err := fmt.Fprintln(w, "no tokens")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSCOPES\tSTATE\tCREATED\tLAST USED")
	for _, t := range list.Content {
		state := "active"
		switch {
		case t.Revoked:
			state = "revoked"
		case t.Expires != nil:
			state = "expires " + *t.Expires
			if exp, err := time.Parse(time.RFC3339, *t.Expires); err == nil && !exp.After(now) {
				state = "expired " + *t.Expires
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, orDash(t.Name), strings.Join(t.Scopes, ","), state, t.CreatedAt, lastUsed(t.LastUsedAt))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, lastUsedNote+"\n", "token")
	return err
}

// printKeys writes the keys of the answer of GET .../service-accounts/{a}
// as a table.
func printKeys(w io.Writer, answer []byte) error {
	var acc struct {
		ID         string   `json:"id"`
		AllowedIPs []string `json:"allowedIPs"`
		Keys       []keyRow `json:"keys"`
	}
	if err := json.Unmarshal(answer, &acc); err != nil {
		return fmt.Errorf("the server's answer is not a service account: %w", err)
	}
	allow := "any address"
	if len(acc.AllowedIPs) > 0 {
		allow = strings.Join(acc.AllowedIPs, ", ")
	}
	fmt.Fprintf(w, "service account %s, callers from %s\n", acc.ID, allow)
	if len(acc.Keys) == 0 {
		_, err := fmt.Fprintln(w, "no keys: procurectl key add makes one")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY ID\tSTATE\tCREATED\tLAST USED")
	for _, k := range acc.Keys {
		state := "active"
		if !k.Active {
			state = "inactive"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.ID, state, k.CreatedAt, lastUsed(k.LastUsedAt))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, lastUsedNote+"\n", "key")
	return err
}

func lastUsed(t *string) string {
	if t == nil {
		return "never"
	}
	return *t
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// page is the paging part of a list answer.
type page struct {
	Size          int `json:"size"`
	Number        int `json:"number"`
	TotalElements int `json:"totalElements"`
	TotalPages    int `json:"totalPages"`
}

// footer says where a page stands among the pages of a list of things
// (one, many: the noun), and how to ask for the next.
func (p page) footer(one, many string) string {
	things := func(n int) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.Itoa(n) + " " + many
	}
	switch {
	case p.TotalElements == 0:
		return "no " + many
	case p.Number >= p.TotalPages:
		return fmt.Sprintf("page %d is past the end (%s, %d a page: the last is -page %d)", p.Number, things(p.TotalElements), p.Size, p.TotalPages-1)
	}
	s := fmt.Sprintf("page %d of %d (%s, %d a page)", p.Number+1, p.TotalPages, things(p.TotalElements), p.Size)
	if p.Number+1 < p.TotalPages {
		s += fmt.Sprintf("; the next: -page %d", p.Number+1)
	}
	return s
}

// printCommunities writes the answer of GET /communities as a table.
func printCommunities(w io.Writer, answer []byte) error {
	var list struct {
		Content []struct {
			ID        string   `json:"id"`
			Name      string   `json:"name"`
			Region    string   `json:"region"`
			AutoRoles []string `json:"autoRoles"`
		} `json:"content"`
		Page page `json:"page"`
	}
	if err := json.Unmarshal(answer, &list); err != nil {
		return fmt.Errorf("the server's answer is not a list of communities: %w", err)
	}
	if len(list.Content) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tREGION\tAUTO-ROLES")
		for _, c := range list.Content {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, orDash(c.Name), c.Region, orDash(strings.Join(c.AutoRoles, ",")))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, list.Page.footer("community", "communities"))
	return err
}

// printSuppliers writes the answer of GET /communities/{c}/suppliers as
// a table.
func printSuppliers(w io.Writer, answer []byte) error {
	var list struct {
		Content []struct {
			ID              string `json:"id"`
			Name            string `json:"name"`
			SupplierID      string `json:"supplierId"`
			ConnectionState string `json:"connectionState"`
			ModifiedDate    string `json:"modifiedDate"`
		} `json:"content"`
		Page page `json:"page"`
	}
	if err := json.Unmarshal(answer, &list); err != nil {
		return fmt.Errorf("the server's answer is not a list of suppliers: %w", err)
	}
	if len(list.Content) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tSUPPLIER ID\tCONNECTION\tMODIFIED")
		for _, s := range list.Content {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, orDash(s.Name), orDash(s.SupplierID), orDash(s.ConnectionState), s.ModifiedDate)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, list.Page.footer("supplier", "suppliers"))
	return err
}
