// Command usersync keeps a community's users in step with an HRIS export,
// through the user synchronisation API (Interface B).
//
// It reads the export - CSV with a header row naming User fields, or JSON
// Lines with one User object per line - checks every row locally first,
// reporting every problem of every row (and syncs nothing if any row is
// wrong), then syncs the rows with
// bounded concurrency: for each, the documented pre-check (get by
// username) and then a create, an update, or nothing when the user
// already matches (userapi.Client.Sync). It ends with a summary and exits
// 1 if any row failed.
//
//	PROCURE_API_KEY=... usersync -url https://users.example.com -account sa-demo -file users.csv
//
// Flags:
//
//	-url URL          base URL of the user API (the service host; /v1 is added)
//	-account ID       service account id (Service-Account-ID)
//	-file PATH        the export; "-" reads standard input (then -format is required)
//	-format F         csv or jsonl; by default from the file's extension (.csv, .jsonl, .ndjson)
//	-concurrency N    users synced at once (default 8)
//	-dry-run          report what would change, per user, without writing (the pre-check still runs;
//	                  a row with an id whose username is unknown is looked up by id on the server's
//	                  SCIM endpoint, so the report says create, or update with the rename)
//	-timeout D        timeout of each HTTP request (default 30s)
//	-retries N        retries of a user after a network error or a 5xx/429 answer (default 4)
//	-retry-wait D     wait before the first retry; it doubles each time, with jitter (default 500ms)
//	-auto-roles LIST  comma-separated role codes the community adds by itself, accounted for when comparing roles;
//	                  only for a server that does not announce them (this module's server does, in the pre-check)
//	-v                print every user's outcome, not only failures
//
// The API key is read only from the environment variable PROCURE_API_KEY,
// never from a flag (flags show up in process lists and shell history).
//
// CSV columns are JSON names of User fields, in any order and case:
// id, username, externalId, firstName, lastName, displayName, email,
// phone, enabled, organisationUnits (or organisationsUnits), roles,
// buyerGroups, approverGroups, attributes. Lists hold codes separated by
// ";" ("BUYER;APPROVER"); attributes hold "name=value" pairs separated by
// ";"; enabled is true, false or empty. A column that is absent leaves
// that field as it is on the server; an empty cell clears the field,
// except id (empty: none, so the server generates one on create) and
// enabled (empty: true on create, unchanged on update).
//
// Exit status: 0 when every user is in step, 1 when the file has errors
// or any user failed, 2 for a usage error.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}
