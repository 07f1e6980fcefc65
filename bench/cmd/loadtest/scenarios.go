package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// manifest is the part of examples/gendata's -manifest output the harness
// uses.
type manifest struct {
	Seed        uint64 `json:"seed"`
	Communities []struct {
		ID        string `json:"id"`
		Region    string `json:"region"`
		Suppliers int    `json:"suppliers"`
		Users     int    `json:"users"`
		Tokens    []struct {
			Kind  string `json:"kind"`
			Token string `json:"token"`
		} `json:"tokens"`
		ServiceAccounts []struct {
			ID         string   `json:"id"`
			Key        string   `json:"key"`
			AllowedIPs []string `json:"allowedIPs"`
		} `json:"serviceAccounts"`
		Sample struct {
			SupplierID           string `json:"supplierId"`
			Query                string `json:"query"`
			QueryMatches         int    `json:"queryMatches"`
			ModifiedSince        string `json:"modifiedSince"`
			ModifiedSinceMatches int    `json:"modifiedSinceMatches"`
			Users                []struct {
				ID       string `json:"id"`
				Username string `json:"username"`
			} `json:"users"`
		} `json:"sample"`
	} `json:"communities"`
}

// creds are what the harness authenticates with: the main community's
// read token and its first service account (no IP allowlist).
type creds struct {
	token     string
	accountID string
	key       string
}

func (m *manifest) creds() (creds, error) {
	if len(m.Communities) == 0 {
		return creds{}, fmt.Errorf("manifest: no communities")
	}
	c := m.Communities[0]
	var cr creds
	for _, t := range c.Tokens {
		if t.Kind == "read" {
			cr.token = t.Token
		}
	}
	for _, a := range c.ServiceAccounts {
		if len(a.AllowedIPs) == 0 {
			cr.accountID, cr.key = a.ID, a.Key
			break
		}
	}
	if cr.token == "" || cr.accountID == "" {
		return creds{}, fmt.Errorf("manifest: community %s lacks a read token or a service account without allowlist", c.ID)
	}
	return cr, nil
}

// scenario is one kind of request driven at the servers.
type scenario struct {
	Name  string // short id, used on the command line and in the table
	About string // what it requests, for people
	// Method, Target (request URI) and Body are the request; for create
	// and update, Body is the one recorded for the baseline, and Lua
	// varies it per request under load.
	Method string
	Target string
	Body   string
	// Service is true for the user API (service account headers), false
	// for the supplier API (bearer token).
	Service bool
	// Lua is a wrk request() function making each request unique; empty
	// means every request is the same.
	Lua string
	// Target ratio to the baseline on memstore (issues 6 and 22), and
	// while -writes run (issue 22; 0: none set).
	Goal, WritesGoal float64
	// Random, when set (randomSupplier, randomPage), makes each request
	// name a supplier or a page drawn at random from all of the
	// community's; Target is then one of them, and the harness records
	// the whole set for the baseline (random.go).
	Random string
	// check inspects the real server's answer to the recorded request:
	// the status and body the scenario expects (the load itself is only
	// meaningful if the server answers correctly).
	check func(status int, body []byte) error
}

const (
	suppliersPath = "/public/community/suppliers"
	usersPath     = "/v1/users"
)

// safeID matches the ids and usernames the generator writes; the Lua and
// JSON the harness builds from them need no escaping.
var safeID = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,100}$`)

// scenarios builds the scenarios for the main community of m. nonce makes
// the usernames this harness run creates unique.
func scenarios(m *manifest, nonce string) ([]scenario, error) {
	c := m.Communities[0]
	s := c.Sample
	if s.SupplierID == "" {
		return nil, fmt.Errorf("manifest: community %s has no sample supplier with two contacts (too few suppliers?)", c.ID)
	}
	var users [][2]string
	for _, u := range s.Users {
		if safeID.MatchString(u.ID) && safeID.MatchString(u.Username) {
			users = append(users, [2]string{u.ID, u.Username})
		}
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("manifest: community %s has no sample users", c.ID)
	}
	perPage := 20
	page1000 := max(0, min(perPage, c.Suppliers-1000*perPage))

	fixtureUser := "fixture-" + nonce
	createBody := createUserBody(fixtureUser, 0)
	updateBody := updateUserBody(users[0][0], users[0][1], 0)

	return []scenario{
		{
			Name: "list", About: "GET " + suppliersPath + " (first page, 20 by name)",
			Method: "GET", Target: suppliersPath, Goal: 0.75, WritesGoal: 0.50,
			check: pageCheck(min(perPage, c.Suppliers), c.Suppliers),
		},
		{
			Name: "list-query", About: fmt.Sprintf("GET %s?query=%s (name prefix; %d matches)", suppliersPath, s.Query, s.QueryMatches),
			Method: "GET", Target: suppliersPath + "?query=" + url.QueryEscape(s.Query), Goal: 0.60,
			check: pageCheck(min(perPage, s.QueryMatches), s.QueryMatches),
		},
		{
			Name: "list-modified", About: fmt.Sprintf("GET %s?modifiedSince=%s (%d matches)", suppliersPath, s.ModifiedSince, s.ModifiedSinceMatches),
			Method: "GET", Target: suppliersPath + "?modifiedSince=" + url.QueryEscape(s.ModifiedSince), Goal: 0.60,
			check: pageCheck(min(perPage, s.ModifiedSinceMatches), s.ModifiedSinceMatches),
		},
		{
			Name: "page-1000", About: "GET " + suppliersPath + "?page=1000 (items 20000-20019 by name)",
			Method: "GET", Target: suppliersPath + "?page=1000", Goal: 0.60,
			check: pageCheck(page1000, c.Suppliers),
		},
		{
			Name: "get-supplier", About: "GET " + suppliersPath + "/{id} (one supplier in full)",
			Method: "GET", Target: suppliersPath + "/" + s.SupplierID, Goal: 0.75,
			check: fieldCheck("id", s.SupplierID),
		},
		{
			Name: "contacts", About: "GET " + suppliersPath + "/{id}/contacts (a supplier with 2 contacts)",
			Method: "GET", Target: suppliersPath + "/" + s.SupplierID + "/contacts", Goal: 0.75,
			check: pageCheck(2, 2),
		},
		{
			Name: "random-supplier", About: fmt.Sprintf("GET %s/{id}, a supplier drawn at random of all %d", suppliersPath, c.Suppliers),
			Method: "GET", Target: suppliersPath + "/" + s.SupplierID, Goal: 0.75, WritesGoal: 0.50,
			Random: randomSupplier, // Lua: set by the harness once it has the ids (randomSupplierLua)
			check:  fieldCheck("id", s.SupplierID),
		},
		{
			Name: "random-page", About: fmt.Sprintf("GET %s?page=P, a page of 20 by name drawn at random of all %d", suppliersPath, pages(c.Suppliers)),
			Method: "GET", Target: suppliersPath + "?page=0", Goal: 0.60,
			Random: randomPage, Lua: randomPageLua(pages(c.Suppliers)),
			check: pageCheck(min(perPage, c.Suppliers), c.Suppliers),
		},
		{
			Name: "get-user", About: "GET " + usersPath + "/username/{username}",
			Method: "GET", Target: usersPath + "/username/" + url.PathEscape(users[0][1]), Service: true, Goal: 0.70,
			check: fieldCheck("id", users[0][0]),
		},
		{
			Name: "update-user", About: fmt.Sprintf("PUT %s (%d existing users in turn, fields changing)", usersPath, len(users)),
			Method: "PUT", Target: usersPath, Body: updateBody, Service: true, Goal: 0.40,
			Lua:   updateLua(users),
			check: fieldCheck("id", users[0][0]),
		},
		{
			Name: "create-user", About: "POST " + usersPath + " (a new username every request)",
			Method: "POST", Target: usersPath, Body: createBody, Service: true, Goal: 0.40,
			Lua:   createLua(),
			check: fieldCheck("username", fixtureUser),
		},
	}, nil
}

// goal is the scenario's target ratio, with writes running or not; 0 when
// none is set.
func (sc *scenario) goal(writing bool) float64 {
	if writing {
		return sc.WritesGoal
	}
	return sc.Goal
}

// pageCheck expects a 200 page with n items of total.
func pageCheck(n, total int) func(int, []byte) error {
	return func(status int, body []byte) error {
		if status != 200 {
			return fmt.Errorf("status %d, want 200: %s", status, clip(body))
		}
		var p struct {
			Content []json.RawMessage `json:"content"`
			Page    struct {
				TotalElements int `json:"totalElements"`
			} `json:"page"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			return fmt.Errorf("body is not a page: %v", err)
		}
		if len(p.Content) != n || p.Page.TotalElements != total {
			return fmt.Errorf("%d items of %d, want %d of %d (the generator's count)", len(p.Content), p.Page.TotalElements, n, total)
		}
		return nil
	}
}

// fieldCheck expects a 200 object whose field has the value want.
func fieldCheck(field, want string) func(int, []byte) error {
	return func(status int, body []byte) error {
		if status != 200 {
			return fmt.Errorf("status %d, want 200: %s", status, clip(body))
		}
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil {
			return fmt.Errorf("body is not an object: %v", err)
		}
		if got, _ := obj[field].(string); !strings.EqualFold(got, want) {
			return fmt.Errorf("%s = %q, want %q", field, got, want)
		}
		return nil
	}
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// The bodies below are built the same way in Go (for the recorded
// request) and in Lua (under load), so the baseline and the real server
// read the same kind of body.

func createUserBody(username string, n int) string {
	return `{"username":"` + username + `","firstName":"Load","lastName":"Tester ` + strconv.Itoa(n) +
		`","displayName":"Load Tester (` + username + `)","email":"` + username + `@load.example","enabled":true,` +
		`"organisationUnits":[{"code":"OU-FIN"}],"roles":[{"code":"BUYER"}],` +
		`"attributes":[{"name":"costCentre","value":"CC-` + strconv.Itoa(n%10000) + `"}]}`
}

func updateUserBody(id, username string, n int) string {
	return `{"id":"` + id + `","username":"` + username + `","firstName":"Updated","lastName":"Run ` + strconv.Itoa(n) +
		`","displayName":"Updated Run ` + strconv.Itoa(n) + `","phone":"+61 400 000 ` + strconv.Itoa(n%1000) +
		`","enabled":true,"roles":[{"code":"BUYER"},{"code":"APPROVER"}],` +
		`"attributes":[{"name":"grade","value":"G` + strconv.Itoa(n%9+1) + `"}]}`
}

// luaPrelude numbers wrk's threads and reads the run tag (the first script
// argument), so that every request of every run has a unique counter.
const luaPrelude = `
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
local tag = "run"
local counter = 0
function init(args)
  if args[1] then tag = args[1] end
end
`

func createLua() string {
	return luaPrelude + `
function request()
  counter = counter + 1
  local n = counter
  local name = "load-" .. tag .. "-" .. tid .. "-" .. n
  local body = '{"username":"' .. name .. '","firstName":"Load","lastName":"Tester ' .. n ..
    '","displayName":"Load Tester (' .. name .. ')","email":"' .. name .. '@load.example","enabled":true,' ..
    '"organisationUnits":[{"code":"OU-FIN"}],"roles":[{"code":"BUYER"}],' ..
    '"attributes":[{"name":"costCentre","value":"CC-' .. (n % 10000) .. '"}]}'
  return wrk.format("POST", "/v1/users", nil, body)
end
`
}

func updateLua(users [][2]string) string {
	var b strings.Builder
	b.WriteString(luaPrelude)
	b.WriteString("local users = {\n")
	for _, u := range users {
		fmt.Fprintf(&b, "  {%q, %q},\n", u[0], u[1])
	}
	b.WriteString("}\n")
	b.WriteString(`
function request()
  counter = counter + 1
  local n = counter
  local u = users[((n * 7 + tid) % #users) + 1]
  local body = '{"id":"' .. u[1] .. '","username":"' .. u[2] .. '","firstName":"Updated","lastName":"Run ' .. n ..
    '","displayName":"Updated Run ' .. n .. '","phone":"+61 400 000 ' .. (n % 1000) ..
    '","enabled":true,"roles":[{"code":"BUYER"},{"code":"APPROVER"}],' ..
    '"attributes":[{"name":"grade","value":"G' .. (n % 9 + 1) .. '"}]}'
  return wrk.format("PUT", "/v1/users", nil, body)
end
`)
	return b.String()
}

// luaDone prints wrk's summary as one JSON line the harness parses
// (latencies in microseconds).
const luaDone = `
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"status_errors":%d,"timeouts":%d,' ..
    '"p50_us":%.1f,"p90_us":%.1f,"p99_us":%.1f,"mean_us":%.1f,"max_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean, latency.max))
end
`

// script is the whole wrk script of a scenario: the headers, the request
// function if any, and the done hook.
func (sc *scenario) script(cr creds) string {
	var b strings.Builder
	fmt.Fprintf(&b, "wrk.method = %q\n", sc.Method)
	if sc.Service {
		fmt.Fprintf(&b, "wrk.headers[\"Service-Account-ID\"] = %q\n", cr.accountID)
		fmt.Fprintf(&b, "wrk.headers[\"Service-API-Key\"] = %q\n", cr.key)
	} else {
		fmt.Fprintf(&b, "wrk.headers[\"Authorization\"] = %q\n", "Bearer "+cr.token)
	}
	if sc.Body != "" {
		b.WriteString("wrk.headers[\"Content-Type\"] = \"application/json; charset=utf-8\"\n")
		fmt.Fprintf(&b, "wrk.body = %q\n", sc.Body)
	}
	b.WriteString(sc.Lua)
	b.WriteString(luaDone)
	return b.String()
}
