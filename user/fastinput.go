package user

// fastWire decodes the plain request bodies clients send - one JSON
// object of the user fields spelled exactly, strings of printable ASCII
// without escapes, the lists as arrays of {"code"} or {"name","value"}
// objects - into w as encoding/json would, without reflection. It
// answers false, leaving w partly filled, for anything else: another
// spelling or case of a key, an unknown or repeated key, an escape or a
// byte outside printable ASCII in a string, a number, a nested value
// where none belongs, malformed JSON. ParseInput then decodes the body
// with encoding/json, which gives the answer (and words every error).
//
// Decoding was 42% of a create request's CPU in the handler benchmark;
// BenchmarkParseInputPaths shows what this path saves, and
// TestFastWireIsEncodingJSON and FuzzFastWire hold it to encoding/json's
// result on every input.
//
// With share, the values are substrings of one copy of data (when it is
// at most maxShared bytes): one allocation instead of one per value, for
// a request body; a user decoded from a data file, which a store keeps,
// is decoded without it, so that it keeps no keys or punctuation alive.
func fastWire(data []byte, w *wireUser, share bool) bool {
	d := fastDec{b: data}
	if share && len(data) <= maxShared {
		d.s = string(data)
	}
	if !d.byte('{') {
		return false
	}
	var seen uint16
	if !d.byte('}') {
		for {
			key, ok := d.str()
			if !ok || !d.byte(':') {
				return false
			}
			f := wireField(key)
			if f < 0 || seen&(1<<f) != 0 {
				return false
			}
			seen |= 1 << f
			if !d.field(f, w) {
				return false
			}
			if d.byte(',') {
				continue
			}
			if !d.byte('}') {
				return false
			}
			break
		}
	}
	d.space()
	return d.i == len(d.b)
}

// The fields of wireUser, by their JSON names.
const (
	fID = iota
	fUsername
	fExternalID
	fFirstName
	fLastName
	fDisplayName
	fEmail
	fPhone
	fEnabled
	fUnits
	fUnits2
	fRoles
	fBuyerGroups
	fAttributes
	fApproverGroups
)

func wireField(key []byte) int {
	switch string(key) {
	case "id":
		return fID
	case "username":
		return fUsername
	case "externalId":
		return fExternalID
	case "firstName":
		return fFirstName
	case "lastName":
		return fLastName
	case "displayName":
		return fDisplayName
	case "email":
		return fEmail
	case "phone":
		return fPhone
	case "enabled":
		return fEnabled
	case "organisationUnits":
		return fUnits
	case "organisationsUnits":
		return fUnits2
	case "roles":
		return fRoles
	case "buyerGroups":
		return fBuyerGroups
	case "attributes":
		return fAttributes
	case "approverGroups":
		return fApproverGroups
	}
	return -1
}

type fastDec struct {
	b []byte
	s string // b as a string, or "": each value a copy of its own
	i int
}

// maxShared bounds the bodies whose values share one copy of the body
// (which the decoded user keeps alive as long as any of its values).
const maxShared = 4 << 10

// text returns the bytes of the string str just returned, as a string.
func (d *fastDec) text(v []byte) string {
	if d.s == "" {
		return string(v)
	}
	end := d.i - 1 // the closing quote
	return d.s[end-len(v) : end]
}

// space skips JSON white space.
func (d *fastDec) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// byte consumes c after white space, if it is next.
func (d *fastDec) byte(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// word consumes the literal w after white space, if it is next.
func (d *fastDec) word(w string) bool {
	d.space()
	if len(d.b)-d.i >= len(w) && string(d.b[d.i:d.i+len(w)]) == w {
		d.i += len(w)
		return true
	}
	return false
}

// str consumes a string of printable ASCII without escapes and returns
// its bytes (shared with the input).
func (d *fastDec) str() ([]byte, bool) {
	if !d.byte('"') {
		return nil, false
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return d.b[start : d.i-1], true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, false
		}
		d.i++
	}
	return nil, false
}

// optStr decodes a string field, or null.
func (d *fastDec) optStr(o *optString) bool {
	o.set = true
	if d.word("null") {
		o.null = true
		return true
	}
	s, ok := d.str()
	o.v = d.text(s)
	return ok
}

func (d *fastDec) field(f int, w *wireUser) bool {
	switch f {
	case fID:
		return d.optStr(&w.ID)
	case fUsername:
		return d.optStr(&w.Username)
	case fExternalID:
		return d.optStr(&w.ExternalID)
	case fFirstName:
		return d.optStr(&w.FirstName)
	case fLastName:
		return d.optStr(&w.LastName)
	case fDisplayName:
		return d.optStr(&w.DisplayName)
	case fEmail:
		return d.optStr(&w.Email)
	case fPhone:
		return d.optStr(&w.Phone)
	case fEnabled:
		w.Enabled.set = true
		switch {
		case d.word("true"):
			w.Enabled.v = true
		case d.word("false"):
		case d.word("null"):
			w.Enabled.null = true
		default:
			return false
		}
		return true
	case fUnits:
		return d.codes(&w.OrganisationUnits)
	case fUnits2:
		return d.codes(&w.OrganisationsUnits)
	case fRoles:
		return d.codes(&w.Roles)
	case fBuyerGroups:
		return d.codes(&w.BuyerGroups)
	case fApproverGroups:
		return d.codes(&w.ApproverGroups)
	case fAttributes:
		return d.attributes(&w.Attributes)
	}
	return false
}

// codes decodes null (the pointer set to nil, as encoding/json does) or
// an array of {"code": string} objects into **p.
func (d *fastDec) codes(p **[]Code) bool {
	if d.word("null") {
		*p = nil
		return true
	}
	if !d.byte('[') {
		return false
	}
	list := []Code{}
	if !d.byte(']') {
		for {
			var c Code
			if !d.byte('{') {
				return false
			}
			if !d.byte('}') {
				key, ok := d.str()
				if !ok || string(key) != "code" || !d.byte(':') {
					return false
				}
				v, ok := d.str()
				if !ok {
					return false
				}
				c.Code = d.text(v)
				if !d.byte('}') {
					return false
				}
			}
			list = append(list, c)
			if d.byte(',') {
				continue
			}
			if !d.byte(']') {
				return false
			}
			break
		}
	}
	**p = list
	return true
}

// attributes decodes null or an array of {"name": string, "value":
// string} objects (either member may be absent, neither repeated).
func (d *fastDec) attributes(p **[]Attribute) bool {
	if d.word("null") {
		*p = nil
		return true
	}
	if !d.byte('[') {
		return false
	}
	list := []Attribute{}
	if !d.byte(']') {
		for {
			var a Attribute
			if !d.byte('{') {
				return false
			}
			if !d.byte('}') {
				var seenName, seenValue bool
				for {
					key, ok := d.str()
					if !ok || !d.byte(':') {
						return false
					}
					v, ok := d.str()
					if !ok {
						return false
					}
					switch {
					case string(key) == "name" && !seenName:
						seenName, a.Name = true, d.text(v)
					case string(key) == "value" && !seenValue:
						seenValue, a.Value = true, d.text(v)
					default:
						return false
					}
					if d.byte(',') {
						continue
					}
					if !d.byte('}') {
						return false
					}
					break
				}
			}
			list = append(list, a)
			if d.byte(',') {
				continue
			}
			if !d.byte(']') {
				return false
			}
			break
		}
	}
	**p = list
	return true
}
