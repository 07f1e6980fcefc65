// Package user implements the rules of the user synchronisation API
// (Interface B; docs: users.md), independent of
// HTTP and of any database.
//
// The pieces, in the order a request meets them:
//
//   - Input is a create or update request body. It keeps which fields
//     were sent, because an update replaces only the fields that are
//     present. It decodes both spellings of the organisation units field
//     (organisationUnits and organisationsUnits).
//   - Input.Normalize trims surrounding white space from every text
//     field, code, attribute name and value; Input.Validate checks the
//     rules of the contract (lengths in characters, email, required
//     username, unique codes and attribute names) and reports every
//     broken rule as a *procure.ValidationError naming the field by its
//     JSON path, such as "roles[1].code".
//   - Service applies the create and update rules (generated UUID ids,
//     enabled defaulting to true, community auto-roles) and calls a Store.
//   - Store is the backend interface: users per community, usernames
//     unique per community compared case-insensitively (UsernameKey), ids
//     unique across the service, atomic create and update. The package
//     usertest is its conformance suite.
//
// JSON null in a request body means "present, with no value": a text field
// or list sent as null is cleared, exactly as "" or [] would clear it. The
// one exception is enabled, which has no empty value: null there counts as
// omitted (true on create, unchanged on update).
package user
