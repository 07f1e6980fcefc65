package user

import (
	"github.com/procurekit/procure/internal/jsontext"
)

// AppendJSON appends u as JSON, byte for byte what encoding/json's Marshal
// writes for it (the json tags of User: empty text fields and empty lists
// left out, Version never written), without reflection. The user API
// answers every get, create and update with it (httpapi's JSON writer
// calls it when a value has it).
//
// encoding/json was a third of the user API's own CPU for a get by
// username (1.5 of 4.5 us in BenchmarkUsersGetHandler, httpapi/users),
// and the get-user scenario of the load test missed its goal by that
// much; BenchmarkUserJSON compares the two, and TestAppendJSONIsEncodingJSON
// holds this encoder to encoding/json's bytes for users filled at random
// with every kind of text an escape exists for.
func (u *User) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsontext.AppendString(b, u.ID)
	b = append(b, `,"username":`...)
	b = jsontext.AppendString(b, u.Username)
	b = jsontext.AppendNonEmpty(b, `,"externalId":`, u.ExternalID)
	b = jsontext.AppendNonEmpty(b, `,"firstName":`, u.FirstName)
	b = jsontext.AppendNonEmpty(b, `,"lastName":`, u.LastName)
	b = jsontext.AppendNonEmpty(b, `,"displayName":`, u.DisplayName)
	b = jsontext.AppendNonEmpty(b, `,"email":`, u.Email)
	b = jsontext.AppendNonEmpty(b, `,"phone":`, u.Phone)
	if u.Enabled {
		b = append(b, `,"enabled":true`...)
	} else {
		b = append(b, `,"enabled":false`...)
	}
	b = appendCodes(b, `,"organisationUnits":`, u.OrganisationUnits)
	b = appendCodes(b, `,"roles":`, u.Roles)
	b = appendCodes(b, `,"buyerGroups":`, u.BuyerGroups)
	if len(u.Attributes) > 0 {
		b = append(b, `,"attributes":`...)
		b = AppendAttributesJSON(b, u.Attributes)
	}
	b = appendCodes(b, `,"approverGroups":`, u.ApproverGroups)
	return append(b, '}')
}

// appendCodes appends key and the list of codes, unless it is empty
// (omitempty: nil and empty alike).
func appendCodes(b []byte, key string, cs []Code) []byte {
	if len(cs) == 0 {
		return b
	}
	b = append(b, key...)
	return AppendCodesJSON(b, cs)
}

// AppendCodesJSON appends a coded list as a JSON array of {"code": ...}
// objects, as AppendJSON writes it and the SCIM extension's lists repeat
// it.
func AppendCodesJSON(b []byte, cs []Code) []byte {
	b = append(b, '[')
	for i, c := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"code":`...)
		b = jsontext.AppendString(b, c.Code)
		b = append(b, '}')
	}
	return append(b, ']')
}

// AppendAttributesJSON appends attributes as a JSON array of
// {"name": ..., "value": ...} objects, as AppendJSON writes them and the
// SCIM extension repeats them.
func AppendAttributesJSON(b []byte, as []Attribute) []byte {
	b = append(b, '[')
	for i, a := range as {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = jsontext.AppendString(b, a.Name)
		b = append(b, `,"value":`...)
		b = jsontext.AppendString(b, a.Value)
		b = append(b, '}')
	}
	return append(b, ']')
}
